// Mixture of experts: the model keys, the routing shares, the Megatron plan's all-to-alls, flops and
// memory against closed forms written from moe.hpp, internal/moe_block.hpp and memory.hpp.
#include "sim/schedule/moe.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/schedule/flops.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/memory.hpp"
#include "sim/schedule/model.hpp"
#include "sim/schedule/plan.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

using namespace exasim;
using namespace exasim::schedule;

namespace {

// Mixtral's shape, small: SwiGLU, grouped-query attention, untied head, 4 experts of which 2 per token.
nlohmann::json small_moe() {
  return {{"layers", 4},
          {"hidden", 256},
          {"heads", 4},
          {"kv_heads", 2},
          {"seq_len", 128},
          {"vocab", 1000},
          {"ffn_hidden", 512},
          {"experts", 4},
          {"top_k", 2},
          {"activation", "swiglu"},
          {"tied_embeddings", false}};
}

ModelSpec load(const nlohmann::json& model) { return load_model_spec(JsonView(model, "test.json", "model")); }

/// The field an InputError names, or "" when loading succeeds.
std::string bad_field(nlohmann::json model) {
  try {
    (void)load(model);
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

TrainingSpec moe_training(std::int64_t global_batch, Recompute recompute) {
  TrainingSpec t;
  t.global_batch = global_batch;
  t.recompute = recompute;
  return t;
}

}  // namespace

TEST_CASE("MoE model keys: defaults, and every bad value names its field", "[unit]") {
  const ModelSpec m = load(small_moe());
  CHECK(m.moe.experts == 4);
  CHECK(m.moe.expert_ffn == 512);  // expert_ffn_hidden defaults to ffn_hidden
  CHECK(m.moe.shared_experts == 0);
  CHECK(m.moe.layer_freq == 1);
  CHECK_FALSE(m.moe.capacity_factor.has_value());
  CHECK(m.moe.skew == 0);
  CHECK_FALSE(load({{"layers", 2}, {"hidden", 64}, {"heads", 2}, {"seq_len", 8}, {"vocab", 10}}).moe.enabled());

  const auto with = [](const char* key, nlohmann::json value) {
    auto j = small_moe();
    j[key] = std::move(value);
    return j;
  };
  CHECK(bad_field(with("experts", 0)) == "model.experts");
  CHECK(bad_field(with("top_k", 5)) == "model.top_k");
  CHECK(bad_field(with("top_k", 0)) == "model.top_k");
  CHECK(bad_field(with("expert_ffn_hidden", 0)) == "model.expert_ffn_hidden");
  CHECK(bad_field(with("shared_experts", -1)) == "model.shared_experts");
  CHECK(bad_field(with("moe_layer_freq", 0)) == "model.moe_layer_freq");
  CHECK(bad_field(with("moe_layer_freq", 5)) == "model.moe_layer_freq");  // more than the layers
  CHECK(bad_field(with("first_dense_layers", 4)) == "model.first_dense_layers");
  CHECK(bad_field(with("capacity_factor", 0)) == "model.capacity_factor");
  CHECK(bad_field(with("expert_skew", -0.5)) == "model.expert_skew");
  CHECK(bad_field(with("expert_skew", "zipf")) == "model.expert_skew");
  auto dense = small_moe();
  dense.erase("experts");
  CHECK(bad_field(dense) == "model.top_k");  // MoE keys without experts
}

TEST_CASE("MoE parameters: every expert in the total, top_k of them active", "[unit]") {
  auto j = small_moe();
  j["moe_layer_freq"] = 2;  // layers 0 and 2 MoE, 1 and 3 dense
  j["shared_experts"] = 1;
  j["expert_ffn_hidden"] = 128;
  const ModelSpec m = load(j);
  const double H = 256, attention = H * (256 + 2 * 128) + H * H;  // QKV with 2 of 4 heads for K, V; output
  const double dense_mlp = 3 * H * 512, expert = 3 * H * 128, router = H * 4, embeddings = 2 * 1000 * H;
  const double moe_layer_dense = attention + router + expert;  // one shared expert of 128
  CHECK(m.moe.is_moe_layer(0));
  CHECK_FALSE(m.moe.is_moe_layer(1));
  CHECK(m.parameters() == Approx(2 * (attention + dense_mlp) + 2 * (moe_layer_dense + 4 * expert) + embeddings));
  CHECK(m.active_parameters() == Approx(2 * (attention + dense_mlp) + 2 * (moe_layer_dense + 2 * expert) + embeddings));

  SECTION("model flops: 6 x tokens x active weights, attention and head as Megatron's formula") {
    const double B = 8, S = 128, L = 4, V = 1000;
    const double active = 2 * (attention + dense_mlp) + 2 * (moe_layer_dense + 2 * expert);
    CHECK(model_flops(m, 8) == Approx(6 * B * S * active + 12 * B * S * S * L * H + 4.5 * B * S * H * V));
    CHECK(hardware_flops(m, 8, Recompute::Full) ==
          Approx(8 * B * S * active + 16 * B * S * S * L * H + 6 * B * S * H * V));
  }
  SECTION("DeepSeek's first dense layers") {
    j["moe_layer_freq"] = 1;
    j["first_dense_layers"] = 3;
    const ModelSpec d = load(j);
    CHECK_FALSE(d.moe.is_moe_layer(2));
    CHECK(d.moe.is_moe_layer(3));
  }
}

TEST_CASE("routing: Zipf shares, capacity, and the shares of the expert-parallel ranks", "[unit]") {
  MoeSpec moe;
  moe.experts = 8;
  moe.top_k = 2;
  SECTION("uniform: 1/ep each, balanced") {
    const auto r = route_experts(moe, 4);
    for (double w : r.rank_share) CHECK(w == Approx(0.25));
    CHECK(r.balanced());
    CHECK(r.kept() == Approx(1));
  }
  SECTION("Zipf s = 1 over 8 experts: f_e = 1/((e+1) H_8), the hottest on rank 0") {
    moe.skew = 1;
    const double h8 = 1 + 1 / 2.0 + 1 / 3.0 + 1 / 4.0 + 1 / 5.0 + 1 / 6.0 + 1 / 7.0 + 1 / 8.0;
    const auto f = expert_popularity(8, 1);
    for (int e = 0; e < 8; ++e) CHECK(f[e] == Approx(1 / ((e + 1) * h8)));
    const auto r = route_experts(moe, 2);
    CHECK(r.rank_share[0] == Approx((1 + 1 / 2.0 + 1 / 3.0 + 1 / 4.0) / h8));
    CHECK_FALSE(r.balanced());
    CHECK(route_experts(moe, 8).max_over_mean() == Approx(8 / h8));  // 2.94
  }
  SECTION("capacity factor 1: no expert takes more than 1/E of the copies, the rest is dropped") {
    moe.skew = 1;
    moe.capacity_factor = 1.0;
    const auto r = route_experts(moe, 8);
    const auto f = expert_popularity(8, 1);
    double kept = 0;
    for (int e = 0; e < 8; ++e) kept += std::min(f[e], 1 / 8.0);
    CHECK(r.kept() == Approx(kept));
    CHECK(r.rank_share[0] == Approx(1 / 8.0));
    CHECK(r.rank_share[7] == Approx(f[7]));
  }
}

TEST_CASE("all-to-all bytes per rank equal the closed forms (top-k, capacity, skew)", "[unit]") {
  // tp 1, dp 4 = ep 4: one expert per rank; 4 sequences, one micro-batch per rank, no recomputation.
  auto j = small_moe();
  MegatronConfig c;
  c.dp = 4;
  c.ep = 4;
  const TrainingSpec t = moe_training(4, Recompute::None);
  const double S = 128.0 * 2 * 256 * 2;    // n tokens x top_k x hidden x 2 bytes
  const double layers = 4, exchanges = 2;  // per layer and pass: one AllToAll and one AllToAllReverse

  SECTION("uniform: (ep - 1)/ep S per all-to-all, 4 per layer") {
    const ModelSpec m = load(j);
    const Plan plan = build_megatron_plan(m, c, t, {});
    REQUIRE(plan.grid.dims().size() == 5);  // tp, dp, pp, ep, edp
    const std::size_t ep = 3;
    REQUIRE(plan.grid.dim(ep).name == "ep");
    CHECK(plan.streams.size() == 1);
    for (Rank r = 0; r < 4; ++r) CHECK(wire_bytes_per_dim(plan, r)[ep] == Approx(layers * 2 * exchanges * 0.75 * S));
  }
  SECTION("capacity factor 0.5 halves every pair's bytes") {
    j["capacity_factor"] = 0.5;
    const Plan plan = build_megatron_plan(load(j), c, t, {});
    CHECK(wire_bytes_per_dim(plan, 0)[3] == Approx(layers * 2 * exchanges * 0.75 * S * 0.5));
  }
  SECTION("skew: rank i sends S (1 - w_i) in an AllToAll and 3 S w_i in its reverse") {
    j["expert_skew"] = 1.2;
    const ModelSpec m = load(j);
    const Plan plan = build_megatron_plan(m, c, t, {});
    CHECK(plan.streams.size() == 4);  // one role per expert-parallel rank: their experts' loads differ
    const auto w = route_experts(m.moe, 4).rank_share;
    for (Rank r = 0; r < 4; ++r) {
      const double per_layer = exchanges * (S * (1 - w[r]) + 3 * S * w[r]);
      CHECK(wire_bytes_per_dim(plan, r)[3] == Approx(layers * per_layer));
    }
  }
  SECTION("full recomputation repeats the forward's two all-to-alls") {
    const Plan plan = build_megatron_plan(load(j), c, moe_training(4, Recompute::Full), {});
    CHECK(wire_bytes_per_dim(plan, 0)[3] == Approx(layers * 3 * exchanges * 0.75 * S));
  }
}

TEST_CASE("expert gradients are reduced over edp, the rest over dp", "[unit]") {
  const ModelSpec m = load(small_moe());
  MegatronConfig c;
  c.dp = 8;
  c.ep = 4;  // edp = 2
  const Plan plan = build_megatron_plan(m, c, moe_training(8, Recompute::None), {});
  const auto bytes = wire_bytes_per_dim(plan, 0);
  const double H = 256, attention = H * (256 + 2 * 128) + H * H, router = H * 4, expert = 3 * H * 512;
  const double dense = 4 * (attention + router) + 2 * 1000 * H;  // layers and the untied embedding and head
  CHECK(bytes[1] == Approx(2 * 7 / 8.0 * 4 * dense));            // fp32 gradients all-reduced over dp = 8
  CHECK(bytes[4] == Approx(2 * 1 / 2.0 * 4 * (4 * expert)));     // one expert per layer over edp = 2
}

TEST_CASE("MoE memory per GPU matches the hand formula", "[unit]") {
  const ModelSpec m = load(small_moe());
  MegatronConfig c;
  c.dp = 4;
  c.ep = 2;  // edp 2, two experts per GPU
  c.zero = 1;
  const TrainingSpec t = moe_training(4, Recompute::Full);
  const MemoryEstimate e = estimate_megatron_memory(m, c, t);
  const double H = 256, attention = H * (256 + 2 * 128) + H * H, router = H * 4, expert = 3 * H * 512;
  const double dense = 4 * (attention + router) + 2 * 1000 * H, experts = 4 * 2 * expert;
  CHECK(e.weights == Approx(2 * (dense + experts)));
  CHECK(e.gradients == Approx(4 * (dense + experts)));
  CHECK(e.optimizer == Approx(12 * (dense / 4 + experts / 2)));
  // Full recomputation: each layer keeps its input; one MoE layer's everything while it is recomputed.
  const double sb = 128, n = 128, received = 2 * n * 2 * 0.5;  // ep x n x top_k x rank share 1/2
  const LayerActivations moe = moe_layer_activations(m, t, 1, {1, 1}, n, received);
  const LayerActivations dense_layer = layer_activations(m, t, 1, {1, 1});
  const double swiglu = 3 * 2.0;  // bytes per inner element kept
  CHECK(moe.outside_core - dense_layer.outside_core ==
        Approx(4 * n * 4 + 2 * received * H + swiglu * received * 512 + 2 * n * 2 * H - swiglu * sb * 512));
  CHECK(e.activations == Approx(4 * 2 * sb * H + moe.all()));
}

TEST_CASE("expert parallelism refuses what Megatron-Core cannot run, naming the field", "[unit]") {
  const ModelSpec m = load(small_moe());
  const TrainingSpec t = moe_training(8, Recompute::Full);
  const auto field = [&](const ModelSpec& model, MegatronConfig c) {
    return megatron_infeasibility(model, c, t, c.gpus()).field;
  };
  MegatronConfig c;
  c.dp = 8;
  c.ep = 8;  // 4 experts over 8 ranks
  CHECK(field(m, c) == "parallel.ep");
  c.dp = 2;
  c.ep = 4;  // ep does not divide dp
  CHECK(field(m, c) == "parallel.ep");
  c = {};
  c.tp = 2;
  c.dp = 4;
  c.ep = 4;
  CHECK(field(m, c) == "parallel.sequence_parallel");
  c.sequence_parallel = true;
  CHECK(field(m, c).empty());
  c.etp = 4;  // does not divide tp
  CHECK(field(m, c) == "parallel.etp");
  c.etp = 1;  // experts whole: ep x etp = 4 divides tp x dp = 8
  CHECK(field(m, c).empty());
  c.zero = 2;
  CHECK(field(m, c) == "parallel.zero");
  MegatronConfig dense_ep;
  dense_ep.dp = 2;
  dense_ep.ep = 2;
  CHECK(field(load({{"layers", 2}, {"hidden", 64}, {"heads", 2}, {"seq_len", 8}, {"vocab", 10}}), dense_ep) ==
        "parallel.ep");
}

TEST_CASE("expert groups are views of the grid: ep inside the data-parallel ranks", "[unit]") {
  ProcessGrid grid({{"tp", 2}, {"dp", 8}, {"pp", 2}});
  const auto ep = grid.add_view("ep", 2, 4);
  const auto edp = grid.add_view("edp", 8, 2);
  CHECK(grid.world_size() == 32);
  // Rank 13 = tp 1, dp 6, pp 0: ep coordinate 6 mod 4 = 2, edp 1; its EP group is ranks 9, 11, 13, 15.
  CHECK(grid.coord(13, ep) == 2);
  CHECK(grid.coord(13, edp) == 1);
  for (std::uint32_t k = 0; k < 4; ++k) CHECK(grid.group_member(13, ep, k) == 9 + 2 * k);
  CHECK(grid.group_member(13, edp, 0) == 5);
  CHECK_THROWS_AS(grid.add_view("bad", 2, 3), std::logic_error);
}

TEST_CASE("context parallelism: a rank routes seq/cp tokens and the EP group spans the CP ranks", "[unit]") {
  const ModelSpec m = load(small_moe());
  MegatronConfig c;
  c.cp = 2;
  c.dp = 2;
  c.ep = 4;  // ep divides cp x dp = 4: the EP group is a sequence's two CP ranks in two replicas
  const TrainingSpec t = moe_training(2, Recompute::None);
  const Plan plan = build_megatron_plan(m, c, t, {});
  REQUIRE(plan.grid.dims().size() == 6);  // tp, dp_cp, pp, cp (nested), ep, edp
  const std::size_t cp = 3, ep = 4;
  REQUIRE(plan.grid.dim(cp).name == "cp");
  REQUIRE(plan.grid.dim(ep).name == "ep");
  for (std::uint32_t k = 0; k < 4; ++k) CHECK(plan.grid.group_member(0, ep, k) == k);
  CHECK(plan.grid.coord(1, cp) == 1);
  CHECK(plan.grid.coord(2, cp) == 0);
  // n = 128 / cp tokens, S = n top_k h 2 bytes; (ep - 1)/ep S per all-to-all, 4 per layer.
  const double S = 64.0 * 2 * 256 * 2;
  for (Rank r = 0; r < 4; ++r) CHECK(wire_bytes_per_dim(plan, r)[ep] == Approx(4 * 4 * 0.75 * S));
  // ep must divide cp x dp, not dp alone; with cp x dp = 2 it cannot be 4.
  MegatronConfig narrow = c;
  narrow.dp = 1;
  CHECK(megatron_infeasibility(m, narrow, moe_training(1, Recompute::None), narrow.gpus()).field == "parallel.ep");
  // Expert state over edp = cp x dp / ep = 1: whole on every GPU; dense state over dp x cp.
  c.zero = 1;
  const MemoryEstimate e = estimate_megatron_memory(m, c, t);
  const double H = 256, attention = H * (256 + 2 * 128) + H * H, router = H * 4, expert = 3 * H * 512;
  const double dense = 4 * (attention + router) + 2 * 1000 * H, experts = 4 * expert;
  CHECK(e.optimizer == Approx(12 * (dense / 4 + experts)));
}

TEST_CASE("fp8: the experts' grouped GEMMs in fp8 after their casts, the router in bf16", "[unit]") {
  const ModelSpec m = load(small_moe());
  MegatronConfig c;
  c.dp = 4;
  c.ep = 4;  // one expert per rank, uniform routing: 4 x 128 x 2 / 4 = 256 rows each
  TrainingSpec t = moe_training(4, Recompute::None);
  t.dtype = gpu::DType::Fp8;
  const Plan plan = build_megatron_plan(m, c, t, {});
  double layer_casts = 0, weight_casts = 0;
  std::size_t expert_gemms = 0;
  for (const auto& op : plan.streams[0].ops) {
    if (op.type != OpType::Compute) continue;
    const std::string& name = plan.names[op.name];
    const auto& k = plan.kernels[op.kernel];
    if (name.ends_with(".fp8_cast")) (name.starts_with("params") ? weight_casts : layer_casts) += k.bytes;
    if (k.kind != gpu::KernelKind::Gemm) continue;
    INFO(name);
    if (name.find(".router") != std::string::npos)
      CHECK(k.dtype == gpu::DType::Bf16);
    else if (name.find(".expert_") != std::string::npos && ++expert_gemms)
      CHECK(k.dtype == gpu::DType::Fp8);
  }
  CHECK(expert_gemms == 4 * 6);  // per layer: up and down forward, their dx and dw backward
  // Per MoE layer, 4 B per element cast of the experts' operands: forward the 256 rows x h dispatched
  // copies and 256 x ffn activations, backward 256 x h and 256 x 2 ffn (SwiGLU) output gradients; the
  // attention's casts as a dense layer's (T = 128, h = 256, f = 512 is the dense MLP's, not run here).
  const double rows = 256, h = 256, ffn = 512;
  const double experts_cast = 4 * rows * (2 * h + ffn + 2 * ffn);
  const double attention_cast = 4 * 128 * (3 * h + static_cast<double>(m.qkv_out()));
  CHECK(layer_casts == Approx(4 * (experts_cast + attention_cast)));
  // Once per iteration, 4 B per linear weight a GPU holds: attention, router and its one expert.
  const double attention = h * (256 + 2 * 128) + h * h, router = h * 4, expert = 3 * h * ffn;
  CHECK(weight_casts == Approx(4 * 4 * (attention + router + expert)));
  // Memory: 2 B more per layer weight for TE's fp8 copy and its transpose.
  const MemoryEstimate bf16 = estimate_megatron_memory(m, c, moe_training(4, Recompute::None));
  CHECK(estimate_megatron_memory(m, c, t).weights - bf16.weights == Approx(2 * 4 * (attention + router + expert)));
}
