#pragma once
// Layer sampling (scenario field simulation.sample_layers = K, or `exasim simulate --sample-layers K`): an
// explicit approximation for runs too large to simulate layer by layer, such as 32,768 GCDs with
// spread placement (about 3 s of wall time a layer on 2 cores, 276 s for 100 layers: docs/performance.md).
//
// The iteration is simulated twice, with K and with 2K layers (in the scheme's layer units: pipeline
// stages x virtual stages for megatron, 1 for axonn4d), every rank and every flow as usual; the two
// runs share nothing, and run at once where the caller asks and two CPUs are there
// (SimulateOptions::concurrent_samples: `exasim simulate` does). Each time
// the summary reports (every rank's finish, compute and exposed communication per dimension, rank 0's
// bytes and collectives per dimension) is then extended linearly to the model's L layers:
//   x(L) = x(2K) + (x(2K) - x(K)) (L - 2K) / K.
// Every layer runs the same ops; an iteration of L layers is one of 2K layers plus L - 2K more of the
// same layer, while what happens once (the first layer's all-gathers, the last data-parallel reduction,
// the optimizer step) is in both samples and cancels from the slope.
//
// LIMITATIONS:
//  - where layers repeat exactly (packed placement, fixed routes, little contention) the extrapolation
//    gives the full run to rounding; under adaptive routing with contention, layers differ by a few
//    percent (routes hash the collective's sequence number, loads differ), and the slope from K layers
//    carries that spread: measured errors in docs/performance.md ("Layer sampling");
//  - an effect that grows faster than linearly with the layers (a backlog that builds up layer after
//    layer) is extrapolated as linear; 2K >= L simulates every layer (no approximation);
//  - under collectives.algorithm nccl (the default) a collective's time is not affine in its bytes
//    (protocol choice, pipeline fill), so gradient reductions whose size grows with the layers
//    extrapolate approximately (1.3 % on a 24-layer test job where ring is exact);
//  - a mixture of experts' samples hold its repeating layers only: its first dense layers
//    (model.first_dense_layers, DeepSeek's 3 of 61) are extrapolated as MoE layers; K must hold whole
//    periods of moe_layer_freq (else simulation.sample_layers is refused);
//  - traces and link loads of the samples describe K or 2K layers, not the iteration: sampling refuses
//    them (api::simulate) rather than report them as the iteration's;
//  - events, flows and wall time are those of the two sampled runs (wall time: the longer one's where
//    they ran at once), not an estimate for the whole.

#include "sim/runtime/runtime.hpp"
#include "sim/scenario/scenario.hpp"

#include <cstdint>
#include <optional>

namespace exasim::api {

/// The layer counts a sampled run simulates, and the model's.
struct LayerSampling {
  std::uint32_t fewer = 0;   ///< K units of layers
  std::uint32_t more = 0;    ///< 2K units
  std::uint32_t layers = 0;  ///< the model's
};

/// The sampling `s` asks for (simulation.sample_layers), or none: sampling off, or 2K units of layers
/// at least the model's (then every layer is simulated).
[[nodiscard]] std::optional<LayerSampling> layer_sampling(const scenario::Scenario& s);

/// `s` with `layers` layers and sampling off (the resolved document says so too).
[[nodiscard]] scenario::Scenario with_layers(const scenario::Scenario& s, std::uint32_t layers);

/// x(sampling.layers) from x(fewer) and x(more), linearly (see above).
[[nodiscard]] double extrapolate(double at_fewer, double at_more, const LayerSampling& sampling);

/// The run of the model's layers from runs of `sampling.fewer` and `sampling.more` layers: the iteration,
/// every rank's times (a finish at most the iteration's) and rank 0's figures extrapolated; events,
/// flows and wall time those of both runs together (api::simulate() gives the longer wall time where
/// they ran at once). Link loads are left empty.
[[nodiscard]] runtime::RunResult extrapolate(const runtime::RunResult& fewer, const runtime::RunResult& more,
                                             const LayerSampling& sampling);

}  // namespace exasim::api
