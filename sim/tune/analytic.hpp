#pragma once
// The analytic stage of `exasim tune`: an iteration time for a parallel configuration in microseconds of
// work, from the same plan, GPU model and machine the full simulation uses, without simulating the
// network. docs/tune.md has the model in prose.
//
// One rank's op stream is replayed on one clock: kernels run one after the other at the GPU model's
// times; a collective starts when it is posted and its dimension's previous collective is done (one
// channel per grid dimension, as a communicator's stream), and lasts the ring closed form
//   ring_steps(kind, p) x (route latency + collective step overhead) + ring_wire_bytes(kind, p, S) / B_dim;
// a Wait moves the clock to the collective's end. So overlap (AxoNN's OAR, ORS, OAG and the
// data-parallel overlap) is what the plan says it is. Every rank of an AxoNN 4D plan runs the same
// stream, so one rank stands for all.
//
// B_dim, the bandwidth of one member of a ring along a grid dimension (stride s, size p), comes from the
// machine under the scenario's placement: every rank sends to its ring successor along the dimension at
// once (one flow each), routed by the topology one after the other with the flows already routed as the
// load (the flow core's measure, so adaptive routing spreads them as it does when they start together);
// the flows on each link are counted, and a flow gets its bottleneck link's equal share (bandwidth /
// flows). So GPU links, routes through a neighbour GPU, NICs shared by the GPUs of a node, and local and
// global dragonfly links shared by the job are all seen, as far as one dimension loads them. B_dim is the
// slowest flow's share; the step latency the slowest route's. Memoised per (stride, size). Collectives
// in flight on one dimension share B_dim equally (processor sharing); a collective's latency is added
// when its bytes are through.
//
// The time for L layers is extrapolated from plans of 1 and 2 layers (every layer's ops are the same;
// the data-parallel reduction and the optimizer are linear in L): T(L) = T(2) + (L - 2) (T(2) - T(1)).
//
// Megatron (docs/tune.md, "The Megatron estimate"): its stages run different streams and its pipeline
// bubbles come from the ranks waiting on each other, so the one-rank replay prices only what one
// micro-batch costs on one stage, and closed forms assemble the iteration. A probe plan with pp = dp = 1
// (the configuration's tp, micro-batch, sequence parallelism and recomputation; the GPU model's kernels
// and the TP ring of the machine under the placement) is replayed at 1 and 2 layers and 1 and 2
// micro-batches, and T(l, m) = a + b l + c m + d l m solved for d (one layer's forward, recomputation and
// backward with its TP collectives), c (the embedding, LM head and loss of a micro-batch), b and a (the
// optimizer per layer and for the embedding). Then, with Lp = L / pp layers on a stage, v virtual stages
// and m micro-batches:
//   stage    = d Lp + c + ZeRO's per-micro-batch traffic (ZeRO 2/3 reduce-scatters per layer, blocking,
//              or with overlap.dp exposed past the chunk's backward; ZeRO 3 all-gathers per layer ahead
//              of its forward and backward, exposed past the previous layer's compute, in backward
//              past its blocking reduce-scatter too: the simulation routes the two apart)
//   pipeline = (m + (pp - 1) / v) stage + 2 (v m + pp - 1) hop    (the bubble (pp - 1) / (v m) of a stage)
//   hop      = the activation's Send over the pp ring (split over TP with scatter-gather, then its TP
//              all-gather), and the tied embedding's exchange once
//   flush    = the DP reduction of the stage's gradients (ZeRO 0: all-reduce; 1: reduce-scatter; with
//              overlap.dp exposed past the last micro-batch's backward), ZeRO 1/2's parameter all-gather,
//              and the optimizer (b Lp + a, over dp with ZeRO >= 1).
// The DP ring is (stride tp, size dp), the pp ring (stride tp dp, size pp), priced as above.
//
// LIMITATIONS:
//  - no contention between dimensions (collectives of x, y, z and data running at once do not share
//    NICs or links), adaptive routing sees only its own dimension's flows, no other traffic; rings only
//    (collectives.algorithm tree, hierarchical and auto are costed as rings); nccl is costed by the
//    library tuner's closed form unloaded (its bandwidth time, latency and pipeline fill): no sharing
//    with the job's other groups, so it runs fast where they share NICs and links (gpt-40b on 1,024
//    Frontier GCDs: 26 % below the simulation on the 16 best grids, which it still finds; taking the
//    dimension's ring share into account ranked worse and is not used);
//  - equal shares at each flow's bottleneck, not max-min fairness (a flow slowed elsewhere leaves its
//    share unused here);
//  - Megatron: the busiest stage pays both the embedding and the LM head (c); the backward's share of a
//    layer (what overlaps ZeRO's traffic) is a fixed 2/3 (3/4 with full recomputation); ZeRO 3 gathers of
//    the embedding and head are left out; p2p transfers are never overlapped with compute (as the plan).

#include "sim/collectives/router.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedule/plan.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

namespace exasim::gpu {
class GpuModel;
}

namespace exasim::tune {

/// Bandwidth and per-step latency of a ring along one grid dimension.
struct RingLink {
  double bandwidth_Bps = 0;   ///< per member, per direction
  double step_latency_s = 0;  ///< route latency plus the collective step overhead
  /// The scenario's collectives.algorithm: whose analytic cost collective_cost charges.
  collectives::Algorithm algorithm = collectives::Algorithm::Ring;
  /// Under collectives.algorithm nccl: the library's profile and what its tuner sees of this
  /// dimension's groups (kind and bytes filled per collective); null: the ring closed form.
  const collectives::NcclProfile* nccl = nullptr;
  collectives::TunerInputs nccl_inputs;
};

/// The ring of every member along one dimension of `size` members `stride` ranks apart, as the header
/// says: each rank's flow to its successor routed on `topology`, one after the other with the flows
/// before it as the load. `gpu_of_rank` empty: rank r on GPU r. Also used by `exasim place` (sim/place),
/// which calls it with the rank -> GPU vector of each candidate node order.
[[nodiscard]] RingLink route_ring(const topo::Topology& topology, const std::vector<std::uint32_t>& gpu_of_rank,
                                  std::uint32_t ranks, std::uint32_t stride, std::uint32_t size,
                                  double step_overhead_s);

/// A collective's time on a dimension's link, in two parts: its bytes through (shared with the other
/// collectives in flight on the dimension) and its latency after them: link.algorithm's analytic cost
/// (collectives::analytic_cost: the ring closed form, or under nccl the library tuner's choice).
struct CollectiveCost {
  double bandwidth_s = 0;
  double latency_s = 0;
};
[[nodiscard]] CollectiveCost collective_cost(schedule::CollKind kind, std::uint32_t p, double bytes,
                                             const RingLink& link);

class AnalyticModel {
 public:
  /// Builds the machine's topology, the placement of `base.gpus` ranks and the GPU model once.
  explicit AnalyticModel(const scenario::Scenario& base);
  ~AnalyticModel();
  AnalyticModel(const AnalyticModel&) = delete;
  AnalyticModel& operator=(const AnalyticModel&) = delete;

  /// Seconds of one iteration of `s` (base's machine, model, GPUs and training; its scheme's parallel
  /// config and training.recompute). Precondition: the configuration is feasible (axonn4d_infeasibility,
  /// megatron_refusal empty). Megatron probes are memoised per (tp, micro_batch, sequence_parallel,
  /// recompute) for the base's model and training: one AnalyticModel per base scenario.
  [[nodiscard]] double iteration_s(const scenario::Scenario& s);

  /// Routes the rings and replays the probes a Megatron configuration needs (so that iteration_s's rate
  /// counts only the estimate).
  void prepare_megatron(const scenario::Scenario& s);

  /// The ring of a dimension of `size` members `stride` ranks apart (memoised).
  [[nodiscard]] RingLink ring(std::uint32_t stride, std::uint32_t size);

  /// Seconds of one rank's stream of `plan` replayed as the header says.
  [[nodiscard]] double replay_s(const schedule::Plan& plan);
  /// The same with the ring of each grid dimension given (indexed like plan.grid.dims()): how
  /// `exasim place` scores a placement without rebuilding the model.
  [[nodiscard]] double replay_s(const schedule::Plan& plan, const std::vector<RingLink>& rings) const;

 private:
  /// T(l, m) = fixed + per_layer l + per_micro_batch m + per_layer_micro_batch l m, as the header says.
  struct MegatronProbe {
    double fixed_s = 0, per_layer_s = 0, per_micro_batch_s = 0, per_layer_micro_batch_s = 0;
  };
  [[nodiscard]] const MegatronProbe& megatron_probe(const scenario::Scenario& s);
  [[nodiscard]] double megatron_iteration_s(const scenario::Scenario& s);

  std::unique_ptr<topo::Topology> topology_;
  std::unique_ptr<gpu::GpuModel> gpu_;
  std::vector<std::uint32_t> gpu_of_rank_;  ///< empty: rank r on GPU r (packed)
  std::uint32_t ranks_ = 0;
  double step_overhead_s_ = 0;
  collectives::Algorithm algorithm_;  ///< the base scenario's collectives.algorithm
  collectives::NcclProfile nccl_profile_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, RingLink> rings_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, bool, int>, MegatronProbe> probes_;
};

}  // namespace exasim::tune
