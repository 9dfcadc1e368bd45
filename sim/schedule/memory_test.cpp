#include "sim/schedule/memory.hpp"

#include <catch2/catch.hpp>

using namespace exasim::schedule;

namespace {

// configs/models/gpt-175b.json
const ModelSpec k175b{"gpt-175b", 96, 12288, 96, 2048, 50304};
constexpr double kMi250xGcdBytes = 64e9;  // HBM per GCD, machines_and_frontier_paper.md B.1

}  // namespace

TEST_CASE("175B with TP4 x PP16 x DP2 and ZeRO-1 fits a 64 GB GCD; without pipelining it does not", "[unit]") {
  const TrainingSpec t{640, Recompute::Full};
  auto fits = estimate_megatron_memory(k175b, {4, 16, 2, 1, 1, 1, false}, t);
  INFO("TP4xPP16xDP2: " << fits.total() / 1e9 << " GB (weights " << fits.weights / 1e9 << ", optimizer "
                        << fits.optimizer / 1e9 << ", activations " << fits.activations / 1e9 << ")");
  CHECK(fits.total() < kMi250xGcdBytes);
  auto flat = estimate_megatron_memory(k175b, {4, 1, 32, 1, 1, 1, false}, t);
  INFO("TP4xPP1xDP32: " << flat.total() / 1e9 << " GB");
  CHECK(flat.total() > kMi250xGcdBytes);
  CHECK(flat.weights > kMi250xGcdBytes);  // even the bf16 weights alone: 174B / 4 * 2 B
}

TEST_CASE("Megatron memory: 16 B per parameter without ZeRO, sharded over dp stage by stage", "[unit]") {
  const TrainingSpec t{64, Recompute::Full};
  const MegatronConfig base{4, 4, 8, 0, 1, 1, false};
  auto z0 = estimate_megatron_stage_memory(k175b, base, t, 1);  // a middle stage: layers only
  const double params = 24 * 12.0 * 12288 * 12288 / 4;
  CHECK(z0.weights == Approx(2 * params));
  CHECK(z0.gradients == Approx(2 * params));
  CHECK(z0.optimizer == Approx(12 * params));
  auto with_zero = [&](std::uint32_t zero) {
    MegatronConfig c = base;
    c.zero = zero;
    return estimate_megatron_stage_memory(k175b, c, t, 1);
  };
  auto z1 = with_zero(1), z2 = with_zero(2), z3 = with_zero(3);
  CHECK(z1.optimizer == Approx(z0.optimizer / 8));
  CHECK(z1.gradients == Approx(z0.gradients));
  CHECK(z2.gradients == Approx(z0.gradients / 8));
  CHECK(z2.weights == Approx(z0.weights));
  CHECK(z3.weights == Approx(z0.weights / 8));
  CHECK(z0.total() > z1.total());
  CHECK(z1.total() > z2.total());
  CHECK(z2.total() > z3.total());
}

TEST_CASE("activations: Korthikanti's per-layer terms times the micro-batches in flight", "[unit]") {
  const ModelSpec m{"t", 16, 1024, 16, 512, 1024};
  const double sbh = 512.0 * 1024;
  // No pipeline, no recomputation: L layers of one micro-batch, s*b*h*(10 + 24/t).
  auto flat = estimate_megatron_memory(m, {4, 1, 1, 0, 1, 1, false}, {8, Recompute::None});
  CHECK(flat.activations == Approx(16 * sbh * (10 + 24.0 / 4)));
  auto sp = estimate_megatron_memory(m, {4, 1, 1, 0, 1, 1, true}, {8, Recompute::None});
  CHECK(sp.activations == Approx(16 * sbh * 34 / 4));
  // Full recomputation: 2sbh per layer plus one layer's working set.
  auto rc = estimate_megatron_memory(m, {4, 1, 1, 0, 1, 1, false}, {8, Recompute::Full});
  CHECK(rc.activations == Approx(16 * 2 * sbh + sbh * (10 + 24.0 / 4)));
  // 1F1B, 4 stages: the first stage keeps min(m, p) micro-batches of its L/p layers = L layers' worth.
  auto pipe = estimate_megatron_stage_memory(m, {1, 4, 1, 0, 1, 1, false}, {8, Recompute::None}, 0);
  CHECK(pipe.activations == Approx(4 * 4 * sbh * 34));
  auto last = estimate_megatron_stage_memory(m, {1, 4, 1, 0, 1, 1, false}, {8, Recompute::None}, 3);
  CHECK(last.activations == Approx(1 * 4 * sbh * 34));
  // Interleaving with v chunks: L * (1 + (p-1)/(p v)) layers on the first stage.
  auto inter = estimate_megatron_stage_memory(m, {1, 4, 1, 0, 1, 2, false}, {8, Recompute::None}, 0);
  CHECK(inter.activations == Approx(16 * (1 + 3.0 / 8) * sbh * 34));
}

TEST_CASE("AxoNN 4D memory: weights sharded over x*y*z, activations s*b*h*(10/gx + 24/gy)", "[unit]") {
  const ModelSpec m{"t", 16, 1024, 16, 512, 1024};
  const Axonn4DConfig g{2, 4, 2, 4};
  auto e = estimate_axonn4d_memory(m, g, {32, Recompute::None});
  const double params = 16 * 12.0 * 1024 * 1024 / 16 + 1024.0 * 1024 / 8;
  CHECK(e.weights == Approx(2 * params));
  CHECK(e.optimizer == Approx(12 * params));
  const double sbh = 32.0 / (4 * 2) * 512 * 1024;
  CHECK(e.activations == Approx(16 * sbh * (10.0 / 2 + 24.0 / 4)));
  CHECK(e.workspace > 1e9);  // the fixed runtime reserve at least
  auto rc = estimate_axonn4d_memory(m, g, {32, Recompute::Full});
  CHECK(rc.activations < e.activations);
}
