#include "sim/schedule/megatron.hpp"
#include "sim/schedule/flops.hpp"

#include <catch2/catch.hpp>

using namespace exasim::schedule;

namespace {

const ModelSpec kMegatronModel{"t", 8, 512, 8, 256, 1000};

struct MegatronClosedForm {
  double tp = 0, dp = 0, pp = 0;
};

/// Bytes a rank of stage `s` sends per dimension, written from megatron.hpp's description (not from the
/// builder): ring all-reduce 2(p-1)/p*S, all-gather / reduce-scatter (p-1)/p*S, Send S.
MegatronClosedForm closed_form(const ModelSpec& m, const MegatronConfig& c, const TrainingSpec& t, std::uint32_t s) {
  auto ar = [](double p) { return 2 * (p - 1) / p; };
  auto ag = [](double p) { return (p - 1) / p; };
  const bool sp = c.sequence_parallel && c.tp > 1, first = s == 0, last = s + 1 == c.pp;
  const double H = m.hidden, T = double(c.micro_batch) * m.seq_len, A = 2 * T * H;
  const double micro = double(t.global_batch) / (c.dp * c.micro_batch), v = c.virtual_stages;
  const double stage_layers = double(m.layers) / c.pp, tp = c.tp, dp = c.dp;
  const double E = std::ceil(double(m.vocab) / c.tp) * H, layer = 12 * H * H / tp;
  MegatronClosedForm f;
  // TP per micro-batch: two reductions per forward pass (recomputation repeats them); backward two
  // all-reduces, or with SP three all-gather/reduce-scatter per block (= 1.5 all-reduces).
  const double passes = t.full_recompute() ? 2 : 1;
  f.tp = micro * stage_layers * (passes * 2 * ar(tp) * A + (sp ? 3 : 2) * ar(tp) * A);
  if (first) f.tp += micro * (sp ? ag(tp) : ar(tp)) * A;                                // embedding
  if (last) f.tp += micro * ((sp ? ag(tp) * A : 0) + 3 * ar(tp) * 4 * T + ar(tp) * A);  // LM head + loss
  // PP: activations out of every chunk but the model's last, gradients out of every chunk but the first;
  // the tied embedding gradient between first and last stage.
  // With scatter-gather (default, without SP) each TP rank sends 1/tp of the tensor and the receiver
  // all-gathers it over TP: one TP all-gather per tensor received.
  if (c.pp > 1) {
    const bool split = c.scatter_gather && !sp && c.tp > 1;
    const double p2p = A / (sp || split ? tp : 1);
    const double sent = (v - (last ? 1 : 0)) + (v - (first ? 1 : 0));
    f.pp = micro * p2p * sent;
    if (split) f.tp += micro * ag(tp) * A * sent;  // received tensors: as many as sent, mirrored
    if (first || last) f.pp += t.dp_grad_bytes * E;
  }
  // DP.
  const double P = stage_layers * layer + (first ? E : 0) + (last && c.pp > 1 ? E : 0);
  const double g = t.dp_grad_bytes;
  switch (c.zero) {
    case 0: f.dp = ar(dp) * g * P; break;
    case 1: f.dp = ag(dp) * g * P + ag(dp) * 2 * P; break;
    case 2: f.dp = micro * ag(dp) * g * P + ag(dp) * 2 * P; break;
    case 3: {
      const double gathered = stage_layers * layer + (first ? E : 0) + (last ? E : 0);
      f.dp = micro * ag(dp) * g * P + micro * 2 * ag(dp) * 2 * gathered;
      break;
    }
  }
  return f;
}

void check_closed_form(const MegatronConfig& c, const TrainingSpec& t, bool overlap_dp = false) {
  auto plan = build_megatron_plan(kMegatronModel, c, t, {true, true, true, overlap_dp});
  REQUIRE(plan.grid.world_size() == c.gpus());
  for (Rank r = 0; r < plan.grid.world_size(); r += std::max(1u, c.tp * c.dp / 2)) {
    const std::uint32_t stage = plan.grid.coord(r, kMegDimPp);
    auto expected = closed_form(kMegatronModel, c, t, stage);
    auto bytes = wire_bytes_per_dim(plan, r);
    INFO("tp=" << c.tp << " pp=" << c.pp << " dp=" << c.dp << " zero=" << c.zero << " v=" << c.virtual_stages
               << " sp=" << c.sequence_parallel << " recompute=" << to_string(t.recompute) << " overlap=" << overlap_dp
               << " rank " << r << " stage " << stage);
    CHECK(bytes[kMegDimTp] == Approx(expected.tp).margin(1e-6));
    CHECK(bytes[kMegDimDp] == Approx(expected.dp).margin(1e-6));
    CHECK(bytes[kMegDimPp] == Approx(expected.pp).margin(1e-6));
  }
}

}  // namespace

TEST_CASE("Megatron rank layout: TP fastest, then DP, then PP, one stream per stage", "[unit]") {
  auto plan = build_megatron_plan(kMegatronModel, {2, 4, 3, 0, 1, 1, false}, {24, Recompute::Full});
  REQUIRE(plan.grid.dims().size() == 3);
  CHECK(plan.grid.dim(kMegDimTp).name == "tp");
  CHECK(plan.grid.dim(kMegDimTp).stride == 1);
  CHECK(plan.grid.dim(kMegDimDp).stride == 2);
  CHECK(plan.grid.dim(kMegDimPp).stride == 6);
  CHECK(plan.role_dim == std::optional<std::size_t>(kMegDimPp));
  CHECK(plan.streams.size() == 4);
  CHECK(plan.grid.coord(13, kMegDimPp) == 2);  // rank 13 = stage 2, dp 0, tp 1
}

TEST_CASE("Megatron wire bytes per dimension equal the closed forms", "[unit]") {
  for (std::uint32_t zero = 0; zero <= 3; ++zero) {
    for (bool recompute : {true, false}) {
      check_closed_form({2, 2, 2, zero, 1, 1, false}, {16, recompute ? Recompute::Full : Recompute::None});
      check_closed_form({2, 4, 2, zero, 2, 1, true}, {16, recompute ? Recompute::Full : Recompute::None});
    }
    check_closed_form({1, 4, 2, zero, 1, 2, false}, {16, Recompute::Full});
    check_closed_form({4, 2, 1, zero, 1, 2, true},
                      {.global_batch = 8, .recompute = Recompute::Full, .dp_grad_bytes = 2});
    check_closed_form({2, 1, 4, zero, 1, 1, false}, {16, Recompute::Full});
    check_closed_form({.tp = 2, .pp = 4, .dp = 2, .zero = zero, .scatter_gather = false}, {16, Recompute::Full});
    // Overlapping the data-parallel reduction changes when it happens, not how much it sends.
    check_closed_form({2, 2, 2, zero, 1, 1, false}, {16, Recompute::Full}, true);
    check_closed_form({1, 4, 2, zero, 1, 2, false}, {16, Recompute::Full}, true);
  }
}

TEST_CASE("every Megatron post is waited for, and Send/Recv carry their peer into the Wait", "[unit]") {
  for (bool overlap : {true, false}) {
    auto plan = build_megatron_plan(kMegatronModel, {2, 4, 2, 3, 1, 2, true}, {16, Recompute::Full},
                                    {true, true, true, overlap});
    for (const auto& stream : plan.streams) {
      std::vector<int> open(stream.slots, 0);
      std::vector<std::int16_t> peer(stream.slots, 0);
      for (const auto& op : stream.ops) {
        if (op.type == OpType::CollStart) {
          REQUIRE(open[op.slot]++ == 0);
          peer[op.slot] = op.peer;
          if (is_p2p(op.coll)) CHECK((op.peer == 1 || op.peer == -1));
        }
        if (op.type == OpType::Wait) {
          REQUIRE(open[op.slot]-- == 1);
          CHECK(op.peer == peer[op.slot]);
        }
      }
      for (int o : open) CHECK(o == 0);
    }
  }
}

TEST_CASE("per-GPU GEMM flops add up to the model's layer flops", "[unit]") {
  const MegatronConfig c{2, 2, 2, 1, 2, 1, false};
  for (bool recompute : {true, false}) {
    auto plan = build_megatron_plan(kMegatronModel, c, {16, recompute ? Recompute::Full : Recompute::None});
    double layer_flops = 0;
    for (const auto& stream : plan.streams)
      for (const auto& op : stream.ops)
        if (op.type == OpType::Compute && plan.kernels[op.kernel].kind == exasim::gpu::KernelKind::Gemm &&
            plan.names[op.name].rfind("L", 0) == 0)
          layer_flops += plan.kernels[op.kernel].flops;
    // Over all stages of one TP rank: (2 + recompute) forward-equivalents of 2*T*12H^2/tp per layer and
    // micro-batch... 3 passes of 2 flops per MAC without recomputation, 4 with it.
    const double micro = 16.0 / (c.dp * c.micro_batch), T = double(c.micro_batch) * kMegatronModel.seq_len;
    const double H = kMegatronModel.hidden;
    const double expected = micro * kMegatronModel.layers * (recompute ? 4 : 3) * 2 * T * 12 * H * H / c.tp;
    CHECK(layer_flops == Approx(expected));
  }
}

TEST_CASE("invalid Megatron configurations name the field to change", "[unit]") {
  const TrainingSpec t{16, Recompute::Full};
  auto field = [&](const MegatronConfig& c, std::uint32_t gpus, const TrainingSpec& tr) {
    return megatron_infeasibility(kMegatronModel, c, tr, gpus).field;
  };
  CHECK(field({2, 2, 2, 0, 1, 1, false}, 8, t).empty());
  CHECK(field({2, 2, 2, 0, 1, 1, false}, 16, t) == "gpus");
  CHECK(field({3, 1, 1, 0, 1, 1, false}, 3, t) == "parallel.tp");              // 8 heads
  CHECK(field({1, 3, 1, 0, 1, 1, false}, 3, t) == "parallel.pp");              // 8 layers
  CHECK(field({1, 2, 1, 0, 1, 3, false}, 2, t) == "parallel.virtual_stages");  // 8 layers over 6 chunks
  CHECK(field({1, 2, 3, 0, 1, 1, false}, 6, t) == "training.global_batch");    // 16 over dp 3
  CHECK(field({1, 2, 2, 0, 4, 1, false}, 4, {20, Recompute::Full}) == "training.global_batch");
  CHECK(field({1, 4, 2, 0, 4, 2, false}, 8, t) == "parallel.virtual_stages");  // 2 micro-batches < 4 stages
  CHECK(field({1, 1, 2, 0, 1, 2, false}, 2, t) == "parallel.virtual_stages");  // interleaving without a pipeline
  CHECK(field({1, 1, 2, 4, 1, 1, false}, 2, t) == "parallel.zero");
  CHECK(field({1, 1, 2, 0, 0, 1, false}, 2, t) == "parallel.micro_batch");
  CHECK(field({0, 1, 2, 0, 1, 1, false}, 2, t) == "parallel.tp");
  CHECK_THROWS_AS(build_megatron_plan(kMegatronModel, {1, 1, 2, 4, 1, 1, false}, t), std::invalid_argument);
}

TEST_CASE("Megatron GEMMs carry the BLAS layouts torch runs: forward X.W^T TN, dX = dY.W NN, dW = dY^T.X NT",
          "[unit]") {
  using exasim::gpu::GemmLayout;
  auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (bool sp : {false, true}) {
    auto plan = build_megatron_plan(kMegatronModel, {2, 2, 2, 1, 1, 1, sp}, {8, Recompute::Full});
    std::size_t forward = 0, dgrad = 0, wgrad = 0;
    for (const auto& stream : plan.streams) {
      for (const auto& op : stream.ops) {
        if (op.type != OpType::Compute) continue;
        const auto& k = plan.kernels[op.kernel];
        if (k.kind != exasim::gpu::KernelKind::Gemm) continue;
        const std::string& name = plan.names[op.name];
        INFO(name);
        if (ends_with(name, ".dx_gemm")) {
          CHECK(k.layout == GemmLayout::NN);
          ++dgrad;
        } else if (ends_with(name, ".dw_gemm")) {
          CHECK(k.layout == GemmLayout::NT);
          ++wgrad;
        } else {
          CHECK(ends_with(name, ".gemm"));  // forward and recomputed forward, LM head included
          CHECK(k.layout == GemmLayout::TN);
          ++forward;
        }
      }
    }
    // Per micro-batch (8 / dp = 4 of them): 4 linear layers per transformer layer, run forward twice
    // (recomputation) and backward once, and the LM head, forward once and backward once.
    const std::size_t micro = 4, linears = 4 * static_cast<std::size_t>(kMegatronModel.layers);
    CHECK(forward == micro * (2 * linears + 1));
    CHECK(dgrad == micro * (linears + 1));
    CHECK(wgrad == dgrad);
  }
}

TEST_CASE("Megatron pipeline p2p ops name their peer stage: next for activations, previous for gradients", "[unit]") {
  auto plan = build_megatron_plan(kMegatronModel, {1, 4, 1, 0, 1, 1, false}, {8, Recompute::Full});
  for (std::uint32_t stage = 0; stage < 4; ++stage) {
    std::size_t p2p = 0;
    for (const auto& op : plan.streams[stage].ops) {
      if (!is_p2p(op.coll) || op.type == OpType::Compute) continue;
      const std::string& name = plan.names[op.name];
      INFO("stage " << stage << " " << name);
      ++p2p;
      if (name == "pp.send_activation" || name == "pp.recv_grad") CHECK(op.peer == 1);
      if (name == "pp.recv_activation" || name == "pp.send_grad") CHECK(op.peer == -1);
      if (name.rfind("embedding.tied_grad", 0) == 0) CHECK(op.peer == (stage == 0 ? -1 : 1));
    }
    CHECK(p2p > 0);
  }
}

TEST_CASE("tensor-parallel communication overlap moves the same bytes in pieces beside GEMM chunks", "[unit]") {
  const TrainingSpec t{16, Recompute::Full};
  MegatronConfig c{.tp = 4, .pp = 2, .dp = 2, .zero = 1, .sequence_parallel = true};
  const auto plain = build_megatron_plan(kMegatronModel, c, t);
  c.tp_comm_overlap = true;
  const auto overlapped = build_megatron_plan(kMegatronModel, c, t);
  // Same wire bytes on every dimension (the closed forms of sequence parallelism).
  for (Rank r : {0u, 9u}) {
    const auto a = wire_bytes_per_dim(plain, r), b = wire_bytes_per_dim(overlapped, r);
    for (std::size_t d = 0; d < a.size(); ++d) CHECK(b[d] == Approx(a[d]));
  }
  // Same GEMM flops, in tp chunks; and collectives posted before a GEMM chunk and waited after it.
  auto gemm_flops = [](const Plan& plan) {
    double f = 0;
    for (const auto& op : plan.streams[0].ops)
      if (op.type == OpType::Compute && plan.kernels[op.kernel].kind == exasim::gpu::KernelKind::Gemm)
        f += plan.kernels[op.kernel].flops;
    return f;
  };
  CHECK(gemm_flops(overlapped) == Approx(gemm_flops(plain)));
  std::size_t beside = 0;
  const auto& ops = overlapped.streams[0].ops;
  for (std::size_t i = 0; i + 1 < ops.size(); ++i)
    if (ops[i].type == OpType::CollStart && ops[i].dim == kMegDimTp && ops[i + 1].type == OpType::Compute &&
        overlapped.kernels[ops[i + 1].kernel].kind == exasim::gpu::KernelKind::Gemm)
      ++beside;
  CHECK(beside > 0);
  // It pipelines sequence parallelism's collectives: without them it is refused, naming the field.
  c.sequence_parallel = false;
  CHECK(megatron_infeasibility(kMegatronModel, c, t, c.gpus()).field == "parallel.tp_comm_overlap");
}
