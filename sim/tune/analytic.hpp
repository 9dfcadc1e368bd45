#pragma once
// The analytic stage of `exasim tune`: an iteration time for a parallel configuration in microseconds of
// work, from the same plan, GPU model and machine the full simulation uses, without simulating the
// network. docs/tune.md has the model in prose.
//
// One rank's op stream is replayed on one clock: kernels run one after the other at the GPU model's
// times; a collective starts when it is posted and its dimension's previous collective is done (one
// channel per grid dimension, as a communicator's stream), and lasts the ring closed form
//   ring_steps(kind, p) x (route latency + collective step overhead) + ring_wire_bytes(kind, p, S) / B_dim;
// a Wait moves the clock to the collective's end. On a machine with calibrated step costs
// (collectives.step_costs), the row covering a collective's kind and bytes replaces the step overhead
// and scales B_dim, as in the simulation. So overlap (AxoNN's OAR, ORS, OAG and the
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
// A scheme whose ranks run different streams assembles its iteration from such replays and the rings'
// closed forms itself (scenario::SchemeEstimate; Megatron's: sim/scenario/schemes/megatron_estimate.cpp).
// AnalyticModel dispatches to the scenario's scheme and gives it the machine (scenario::AnalyticMachine).
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
//  - each scheme's own estimate has its own (the scheme's file in sim/scenario/schemes/).

#include "sim/collectives/router.hpp"
#include "sim/collectives/step_costs.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedule/plan.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace exasim::gpu {
class GpuModel;
}

namespace exasim::tune {

/// Bandwidth and per-step latency of a ring along one grid dimension.
struct RingLink {
  double bandwidth_Bps = 0;    ///< per member, per direction
  double step_latency_s = 0;   ///< route latency plus the collective step overhead
  double step_overhead_s = 0;  ///< the machine's collective step overhead (part of step_latency_s)
  /// The machine's calibrated rows per collective kind and size band (collectives/step_costs.hpp), as
  /// the simulation runtimes apply them: a row covering a collective replaces step_overhead_s and
  /// scales the bandwidth. Null or empty: none.
  const std::vector<collectives::StepCost>* step_costs = nullptr;
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
/// `step_overhead_s` and `step_costs` (may be null) are the machine's, kept in the link for collective_cost.
[[nodiscard]] RingLink route_ring(const topo::Topology& topology, const std::vector<std::uint32_t>& gpu_of_rank,
                                  std::uint32_t ranks, std::uint32_t stride, std::uint32_t size, double step_overhead_s,
                                  const std::vector<collectives::StepCost>* step_costs);

/// A collective's time on a dimension's link, in two parts: its bytes through (shared with the other
/// collectives in flight on the dimension) and its latency after them: link.algorithm's analytic cost
/// (collectives::analytic_cost: the ring closed form, or under nccl the library tuner's choice).
struct CollectiveCost {
  double bandwidth_s = 0;
  double latency_s = 0;
};
[[nodiscard]] CollectiveCost collective_cost(schedule::CollKind kind, std::uint32_t p, double bytes,
                                             const RingLink& link);

class AnalyticModel final : public scenario::AnalyticMachine {
 public:
  /// Builds the machine's topology, the placement of `base.gpus` ranks and the GPU model once.
  explicit AnalyticModel(const scenario::Scenario& base);
  ~AnalyticModel() override;
  AnalyticModel(const AnalyticModel&) = delete;
  AnalyticModel& operator=(const AnalyticModel&) = delete;

  /// Seconds of one iteration of `s` (base's machine, model, GPUs and training; its scheme's parallel
  /// config and training.recompute): its scheme's estimate. Precondition: the scheme's refusal is empty.
  /// Estimates may memoise for the base's model and training: one AnalyticModel per base scenario.
  [[nodiscard]] double iteration_s(const scenario::Scenario& s);

  /// Routes the rings and replays the probes the estimate of `s` needs (so that iteration_s's rate
  /// counts only the estimate).
  void prepare(const scenario::Scenario& s);

  /// Puts rank r on GPU gpu_of_rank[r] instead of the base scenario's placement, forgetting the rings
  /// and estimates of the one before: how `exasim place` scores a scheme whose ranks run different
  /// streams (its estimate under each candidate placement).
  void set_placement(std::vector<std::uint32_t> gpu_of_rank);

  /// The ring of a dimension of `size` members `stride` ranks apart (memoised).
  [[nodiscard]] RingLink ring(std::uint32_t stride, std::uint32_t size);

  /// Seconds of one rank's stream of `plan` replayed as the header says.
  [[nodiscard]] double replay_s(const schedule::Plan& plan) override;
  [[nodiscard]] Ring ring_of(std::uint32_t stride, std::uint32_t size) override;
  [[nodiscard]] double collective_s(schedule::CollKind kind, std::uint32_t stride, std::uint32_t size,
                                    double bytes) override;
  /// The same with the ring of each grid dimension given (indexed like plan.grid.dims()): how
  /// `exasim place` scores a placement without rebuilding the model.
  [[nodiscard]] double replay_s(const schedule::Plan& plan, const std::vector<RingLink>& rings) const;

 private:
  /// The estimate of `entry`, made when first asked.
  [[nodiscard]] scenario::SchemeEstimate& estimate_of(const scenario::Scheme& entry);

  std::unique_ptr<topo::Topology> topology_;
  std::unique_ptr<gpu::GpuModel> gpu_;
  std::vector<std::uint32_t> gpu_of_rank_;  ///< empty: rank r on GPU r (packed)
  std::uint32_t ranks_ = 0;
  double step_overhead_s_ = 0;
  std::vector<collectives::StepCost> step_costs_;  ///< the base machine's rows
  collectives::Algorithm algorithm_;               ///< the base scenario's collectives.algorithm
  collectives::NcclProfile nccl_profile_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, RingLink> rings_;
  std::map<const scenario::Scheme*, std::unique_ptr<scenario::SchemeEstimate>> estimates_;
};

}  // namespace exasim::tune
