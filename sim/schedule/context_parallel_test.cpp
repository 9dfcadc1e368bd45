#include "sim/schedule/context_parallel.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/memory.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace exasim::schedule;

namespace {

// 8 layers, hidden 512, 8 query heads and 4 key/value heads (GQA) of 64, SwiGLU, sequence 256.
ModelSpec gqa_model() {
  ModelSpec m{"t", 8, 512, 8, 256, 1000};
  m.kv_heads = 4;
  m.activation = Activation::Swiglu;
  m.tied_embeddings = false;
  return m;
}

MegatronConfig cp_config(std::uint32_t tp, std::uint32_t cp, std::uint32_t pp, std::uint32_t dp, CpComm comm) {
  MegatronConfig c;
  c.tp = tp;
  c.cp = cp;
  c.pp = pp;
  c.dp = dp;
  c.cp_comm = comm;
  return c;
}

/// Bytes of one K/V block written out: 2 (K, V) x seq/cp x kv_heads/tp x head_dim x micro_batch x 2 B.
double block_bytes(const ModelSpec& m, const MegatronConfig& c) {
  return 2.0 * (m.seq_len / c.cp) * (m.kv() / c.tp) * m.head_dim() * c.micro_batch * 2;
}

/// Bytes a rank sends over CP per iteration, from context_parallel.hpp's description: per layer and
/// micro-batch, (cp - 1) blocks per forward (recomputation repeats it) and 2 (cp - 1) per backward,
/// ring p2p or all-gather + reduce-scatter alike.
double cp_closed_form(const ModelSpec& m, const MegatronConfig& c, const TrainingSpec& t) {
  const double micro = double(t.global_batch) / (c.dp * c.micro_batch), stage_layers = double(m.layers) / c.pp;
  const double forwards = t.recompute == Recompute::None ? 1 : 2;
  return micro * stage_layers * (forwards + 2) * (c.cp - 1) * block_bytes(m, c);
}

}  // namespace

TEST_CASE("a K/V block is 2 x seq/cp x kv_heads/tp x head_dim x micro_batch elements", "[unit]") {
  const auto m = gqa_model();
  CHECK(kv_block_bytes(m, 2, 4, 3, 2) == 2.0 * 64 * 2 * 64 * 3 * 2);
  CHECK(kv_block_bytes(m, 1, 1, 1, 2) == 2.0 * 256 * 4 * 64 * 2);
}

TEST_CASE("Megatron-Core rank order tp-cp-dp-pp: dp_cp reduces gradients over dp x cp, cp nested in it", "[unit]") {
  const auto m = gqa_model();
  const auto plan = build_megatron_plan(m, cp_config(2, 2, 2, 3, CpComm::P2p), {12, Recompute::Full});
  REQUIRE(plan.grid.world_size() == 24);
  REQUIRE(plan.grid.dims().size() == 4);
  CHECK(plan.grid.dim(kMegDimDp).name == "dp_cp");
  CHECK(plan.grid.dim(kMegDimDp).size == 6);
  CHECK(plan.grid.dim(kMegDimCp).name == "cp");
  CHECK(plan.grid.dim(kMegDimCp).size == 2);
  CHECK(plan.grid.dim(kMegDimPp).stride == 12);
  // rank = ((pp * dp + dp_rank) * cp + cp_rank) * tp + tp_rank
  for (std::uint32_t pp = 0; pp < 2; ++pp)
    for (std::uint32_t d = 0; d < 3; ++d)
      for (std::uint32_t c = 0; c < 2; ++c)
        for (std::uint32_t t = 0; t < 2; ++t) {
          const Rank r = ((pp * 3 + d) * 2 + c) * 2 + t;
          CHECK(plan.grid.coord(r, kMegDimTp) == t);
          CHECK(plan.grid.coord(r, kMegDimCp) == c);
          CHECK(plan.grid.coord(r, kMegDimDp) == d * 2 + c);
          CHECK(plan.grid.coord(r, kMegDimPp) == pp);
        }
  // Without CP the grid is Megatron's three dimensions, as before.
  const auto plain = build_megatron_plan(m, cp_config(2, 1, 2, 3, CpComm::P2p), {12, Recompute::Full});
  CHECK(plain.grid.dims().size() == 3);
  CHECK(plain.grid.dim(kMegDimDp).name == "dp");
}

TEST_CASE("CP wire bytes per rank equal the ring and all-gather closed forms", "[unit]") {
  const auto m = gqa_model();
  for (const auto comm : {CpComm::P2p, CpComm::AllGather})
    for (const auto recompute : {Recompute::None, Recompute::Selective, Recompute::Full})
      for (const std::uint32_t cp : {2u, 4u, 8u})
        for (const std::uint32_t tp : {1u, 2u, 4u}) {
          auto c = cp_config(tp, cp, 2, 1, comm);
          c.micro_batch = 2;
          const TrainingSpec t{8, recompute};
          const auto plan = build_megatron_plan(m, c, t);
          INFO("cp " << cp << " tp " << tp << " " << to_string(comm) << " recompute " << to_string(recompute));
          for (Rank r = 0; r < plan.grid.world_size(); r += tp)
            CHECK(wire_bytes_per_dim(plan, r)[kMegDimCp] == Approx(cp_closed_form(m, c, t)));
        }
}

TEST_CASE("the p2p ring posts one Send and one Recv per step beside the attention, all-gather three collectives",
          "[unit]") {
  const auto m = gqa_model();
  const TrainingSpec t{4, Recompute::None};
  const std::uint32_t cp = 4;
  auto count = [&](CpComm comm) {
    return collectives_per_dim(build_megatron_plan(m, cp_config(1, cp, 1, 1, comm), t), 0);
  };
  const double passes = 4.0 * m.layers;  // micro-batches x layers
  // Forward: cp - 1 steps send; backward: all cp steps (K/V, then K/V and dK/dV, then dK/dV).
  CHECK(count(CpComm::P2p)[kMegDimCp] == passes * 2 * ((cp - 1) + cp));
  CHECK(count(CpComm::AllGather)[kMegDimCp] == passes * 3);
  // Each ring step's transfers are posted before the step's attention kernel and waited after it.
  const auto plan = build_megatron_plan(m, cp_config(1, cp, 1, 1, CpComm::P2p), t);
  const auto& ops = plan.streams[0].ops;
  std::size_t beside = 0;
  for (std::size_t i = 0; i + 2 < ops.size(); ++i)
    if (ops[i].type == OpType::CollStart && ops[i].dim == kMegDimCp && ops[i].coll == CollKind::Send &&
        ops[i + 1].type == OpType::CollStart && ops[i + 1].coll == CollKind::Recv &&
        ops[i + 2].type == OpType::Compute &&
        plan.kernels[ops[i + 2].kernel].kind == exasim::gpu::KernelKind::FlashAttention) {
      CHECK(ops[i].peer == 1);
      CHECK(ops[i + 1].peer == -1);
      ++beside;
    }
  CHECK(beside == passes * ((cp - 1) + cp));
}

TEST_CASE("the gradient reduction spans dp x cp ranks and ZeRO shards over them", "[unit]") {
  const auto m = gqa_model();
  const TrainingSpec t{8, Recompute::Full};
  for (const std::uint32_t zero : {0u, 1u}) {
    auto c = cp_config(2, 2, 1, 2, CpComm::P2p);
    c.zero = zero;
    const auto plan = build_megatron_plan(m, c, t);
    REQUIRE(plan.grid.dim(kMegDimDp).size == 4);
    // Stage parameters: layers, the input embedding and the untied LM head, each vocab-parallel over tp.
    const double P = m.layers * m.layer_params() / 2 + 2 * (m.vocab / 2.0) * m.hidden;
    const double n = 4, share = (n - 1) / n;
    const double expected = zero == 0 ? 2 * share * 4 * P : share * 4 * P + share * 2 * P;
    CHECK(wire_bytes_per_dim(plan, 0)[kMegDimDp] == Approx(expected));
    // The same bytes as a plan without CP on dp x cp data-parallel ranks.
    auto wide = cp_config(2, 1, 1, 4, CpComm::P2p);
    wide.zero = zero;
    CHECK(wire_bytes_per_dim(build_megatron_plan(m, wide, t), 0)[kMegDimDp] == Approx(expected));
  }
}

TEST_CASE("a CP rank runs the layers of seq/cp tokens and 1/cp of the causal attention", "[unit]") {
  const auto m = gqa_model();
  const TrainingSpec t{4, Recompute::None};
  auto short_model = m;
  short_model.seq_len = m.seq_len / 4;
  const auto split = build_megatron_plan(m, cp_config(2, 4, 1, 1, CpComm::P2p), t);
  const auto shorter = build_megatron_plan(short_model, cp_config(2, 1, 1, 1, CpComm::P2p), t);
  auto flops = [](const Plan& plan, exasim::gpu::KernelKind kind) {
    double f = 0;
    for (const auto& op : plan.streams[0].ops)
      if (op.type == OpType::Compute && plan.kernels[op.kernel].kind == kind) f += plan.kernels[op.kernel].flops;
    return f;
  };
  // GEMMs and TP traffic: those of the whole model on a sequence of seq/cp tokens.
  CHECK(flops(split, exasim::gpu::KernelKind::Gemm) == Approx(flops(shorter, exasim::gpu::KernelKind::Gemm)));
  CHECK(wire_bytes_per_dim(split, 0)[kMegDimTp] == Approx(wire_bytes_per_dim(shorter, 0)[kMegDimTp]));
  // Attention: cp steps of a seq/cp causal block, 2 b s^2 (heads/tp) head_dim / cp forward, 2.5x backward.
  const double b = 1, s = m.seq_len, q_width = m.heads / 2 * m.head_dim();
  const double forward = 2 * b * s * s * q_width / 4;
  CHECK(flops(split, exasim::gpu::KernelKind::FlashAttention) == Approx(4 * m.layers * 3.5 * forward));
}

TEST_CASE("bad context-parallel configurations name parallel.cp or gpus", "[unit]") {
  const auto m = gqa_model();
  const TrainingSpec t{8, Recompute::Full};
  auto field = [&](const MegatronConfig& c, std::uint32_t gpus, const TrainingSpec& tr) {
    return megatron_infeasibility(m, c, tr, gpus).field;
  };
  CHECK(field(cp_config(2, 4, 1, 1, CpComm::P2p), 8, t).empty());
  CHECK(field(cp_config(2, 4, 1, 1, CpComm::P2p), 4, t) == "gpus");  // tp*cp*pp*dp = 8
  CHECK(megatron_infeasibility(m, cp_config(2, 4, 1, 1, CpComm::P2p), t, 4).why.find("tp*cp*pp*dp") == 0);
  CHECK(field(cp_config(1, 3, 1, 1, CpComm::P2p), 3, t) == "parallel.cp");      // 6 chunks of 256 tokens
  CHECK(field(cp_config(1, 256, 1, 1, CpComm::P2p), 256, t) == "parallel.cp");  // 512 chunks
  CHECK(field(cp_config(1, 0, 1, 1, CpComm::P2p), 0, t) == "parallel.cp");
  TrainingSpec standard = t;
  standard.attention = AttentionImpl::Standard;
  CHECK(field(cp_config(1, 2, 1, 1, CpComm::P2p), 2, standard) == "parallel.cp");
  CHECK(field(cp_config(1, 1, 1, 1, CpComm::P2p), 1, standard).empty());
  // Sequence parallelism splits the rank's seq/cp tokens over tp: 4 tokens per rank over tp 4, not 8.
  auto mha = m;
  mha.kv_heads = 8;
  auto sp = cp_config(4, 64, 1, 1, CpComm::P2p);
  sp.sequence_parallel = true;
  CHECK(megatron_infeasibility(mha, sp, t, 256).field.empty());
  sp.tp = 8;
  CHECK(megatron_infeasibility(mha, sp, t, 512).field == "parallel.tp");
  CHECK(parse_cp_comm("p2p") == CpComm::P2p);
  CHECK(parse_cp_comm("all_gather") == CpComm::AllGather);
  CHECK_FALSE(parse_cp_comm("a2a"));
}

TEST_CASE("CP memory: activations and logits of seq/cp tokens, ZeRO over dp x cp, the K/V exchange", "[unit]") {
  const auto m = gqa_model();
  TrainingSpec t{8, Recompute::None};
  t.dropout = 0;
  auto c = cp_config(2, 4, 1, 1, CpComm::P2p);
  c.zero = 1;
  const auto e = estimate_megatron_memory(m, c, t);
  // By hand (memory.hpp): per layer, s = 64 tokens of b = 1 sequence, h = 512, kvh = 256, ffn = 4h
  // (SwiGLU: 3 ffn kept), a = 8 heads, tp 2 without SP (outer 1, inner 2):
  //   outer 4 e s h = 4 x 2 x 64 x 512; inner (e h + 2 e kvh + e h) s + 3 e s ffn; flash 4 a s.
  const double s = 64, h = 512, kvh = 256, ffn = 2048, a = 8, E = 2;
  const double outer = 4 * E * s * h;
  const double inner = (E * h + 2 * E * kvh + E * h) * s + 3 * E * s * ffn;
  const double layer = outer + inner / 2 + 4 * a * s / 2;
  CHECK(e.activations == Approx(8 * layer));  // 1F1B on one stage: one micro-batch in flight, 8 layers
  // Weights of one TP shard, optimizer over dp x cp = 4.
  const double P = 8 * m.layer_params() / 2 + 2 * 500.0 * h;
  CHECK(e.weights == Approx(2 * P));
  CHECK(e.optimizer == Approx(12 * P / 4));
  // Logits of 64 tokens, 500 local vocabulary entries, fp32 + bf16; the K/V of the whole sequence.
  const double kv_sequence = 2 * 256 * (4 / 2) * 64 * E;
  CHECK(e.logits == Approx(6 * s * 500));
  CHECK(e.buffers == Approx(kv_sequence));
  c.cp_comm = CpComm::AllGather;
  CHECK(estimate_megatron_memory(m, c, t).buffers == Approx(2 * kv_sequence));
  // One more NCCL ring group (CP) with all_gather.
  CHECK(estimate_megatron_memory(m, c, t).runtime > e.runtime);
}
