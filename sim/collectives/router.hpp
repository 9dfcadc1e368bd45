#pragma once
// Turning a ready collective (every member has posted it) into routed flows, for any runtime: the fast
// flow core and SimGrid both run collectives through here, so that they route every hop identically
// and the cross-check compares network models, not two ideas of what a collective is.
//
// A collective runs as one or more stages, one after another. A stage is a set of bundles started
// together; a bundle is one flow whose route is the routes of several hops end to end, so that all
// its hops move at one rate, the slowest one's, as a pipelined ring (or tree) does. The stage ends
// `latency_s` after its last bundle has ended (its steps, each paying the slowest hop's route latency
// plus the machine's per-step software overhead). Stage s is routed when it starts: an adaptive choice
// sees the load of that moment.
//
// Each hop is routed with its flow key (flow_key.hpp) and reported to `on_hop` right after, so that a
// runtime can count it as load before the next hop of the same collective is routed.
//
// What each algorithm routes (its file, algorithms/<name>.cpp, registers its stages and their routing;
// closed forms in algorithm.hpp, derivations in docs/collectives.md):
//  - ring: one stage, one bundle: hop k = member k -> member k+1 (mod p), flow-key position k, each
//    hop carrying ring_wire_bytes; latency ring_steps x (slowest hop + overhead).
//  - tree (all-reduce): one stage, two bundles, one per tree of the double binary tree: first every
//    member's hop up to its parent (reduce), then every parent's hop down to each child (broadcast),
//    each hop carrying S/2; latency tree_steps = 2 x depth x (slowest hop of both trees + overhead).
//  - hierarchical: per stage (hierarchical_stage) either one ring bundle per node over its L members
//    in group order, or one ring bundle per local index over the nodes in node-id order
//    (group_layout.hpp); each hop carries the stage's ring wire bytes; latency: the stage's ring steps
//    x (its slowest hop + overhead).
//  - nccl: one stage, NCCL's choice of ring or tree and protocol over channels striped across NIC
//    rails (internal/nccl_route.hpp), latency the library's own;
//  - direct: per stage (2 for all-reduce: reduce-scatter then all-gather; 1 otherwise) p(p-1) one-hop
//    bundles of S/p, member i's sends in the order i+1, i+2, ... mod p; latency 1 x (slowest hop +
//    overhead). An all-to-all is one such stage whose bundle i -> j carries all_to_all_pair_bytes
//    (plan.hpp: S/p, or the members' shares).
//  - all-to-all runs direct whatever the scenario asks (NCCL runs it as grouped send/recv, the direct
//    pattern), or hierarchical when asked and the members are spread evenly over nodes, more than one
//    per node: an intra-node stage that hands every member the data bound for its local index on every
//    node, then an inter-node stage among the members of equal local index
//    (algorithms/hierarchical_all_to_all.cpp).
// Hops of algorithms other than ring take flow-key positions from hop_position (flow_key.hpp), so
// ring keys are those of before and no two hops of one collective share a key.
//
// LIMITATIONS: hop latencies of a stage are not summed along the tree's depth beyond `steps` x the
// slowest hop; chunking (NCCL's pipelining granularity) is not modelled; a bundle moves at its slowest
// hop's rate, so a tree's fast intra-node edges wait for its slowest edge, as a pipelined tree does.

#include "sim/collectives/algorithm.hpp"
#include "sim/collectives/nccl_tuner.hpp"
#include "sim/collectives/step_costs.hpp"
#include "sim/schedule/grid.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace exasim::collectives {

using schedule::Rank;

/// One ready collective of one group, as the router needs it.
struct GroupCall {
  const schedule::ProcessGrid* grid = nullptr;
  const std::vector<std::uint32_t>* gpu_of_rank = nullptr;  ///< placement; null or empty: rank r on GPU r
  std::uint64_t seed = 1;                                   ///< flow keys
  /// Software cost of one step: the machine's collectives.step_overhead_s. A stage no row covers pays it.
  double step_overhead_s = 0;
  /// The machine's calibrated rows (null or empty: none): route_stage looks one up per stage, by the
  /// ring that stage runs on (stage_ring), and it replaces step_overhead_s and the bandwidth there;
  /// auto's estimate (cost_inputs) takes the row of the whole group's kind, size and buffer.
  const std::vector<StepCost>* step_costs = nullptr;
  Rank first = 0;  ///< the group's member 0
  std::uint8_t dim = 0;
  std::uint32_t group_id = 0;
  std::uint32_t sequence = 0;  ///< the group's count of earlier collectives along `dim`
  schedule::CollKind kind = schedule::CollKind::AllReduce;
  double bytes = 0;  ///< the full buffer S
  /// All-to-all only: the members' shares in group order (Plan::all_to_all_shares); null: uniform.
  const double* shares = nullptr;
  const NcclProfile* nccl = nullptr;  ///< the library's constants, for Algorithm::Nccl

  [[nodiscard]] std::uint32_t size() const { return grid->dim(dim).size; }
  [[nodiscard]] Rank member(std::uint32_t k) const { return grid->group_member(first, dim, k); }
  /// member(k + 1) - member(k): the members are evenly spaced, so a walk over them needs no division.
  [[nodiscard]] std::uint32_t member_stride() const { return grid->dim(dim).stride; }
  [[nodiscard]] std::uint32_t gpu(Rank r) const {
    return gpu_of_rank == nullptr || gpu_of_rank->empty() ? r : (*gpu_of_rank)[r];
  }
};

/// The routed bundles of one stage. Reused between calls: clear() keeps the capacity.
struct StageRoute {
  struct Bundle {
    std::uint32_t begin = 0, count = 0;  ///< its route: links[begin, begin + count)
    double bytes = 0;                    ///< bytes each of its hops carries
  };
  std::vector<topo::LinkId> links;
  std::vector<Bundle> bundles;
  double latency_s = 0;         ///< paid once every bundle of the stage has ended
  double rank0_wire_bytes = 0;  ///< bytes rank 0 sends in this stage (rank 0 may not be a member)
  /// Fraction of the routes' bandwidth the stage's transfers reach (a calibrated StepCost row; 1 without
  /// one): the runtime divides the bundles' bytes by it.
  double bandwidth_scale = 1;

  void clear() {
    links.clear();
    bundles.clear();
    latency_s = 0;
    rank0_wire_bytes = 0;
    bandwidth_scale = 1;
  }
};

/// Called after each hop is routed with the links of that hop.
using OnHop = std::function<void(const topo::LinkId* links, std::size_t count)>;

/// The algorithm a collective runs: `requested` unless it is Auto (then choose_fastest, cost_model.hpp)
/// or does not apply to this collective (tree for anything but an all-reduce of 2 or more members,
/// hierarchical where the members are not spread evenly, more than one per node, over more than one
/// node; nccl and direct for Send/Recv or a group of one): then ring. An all-to-all runs direct, or
/// hierarchical where that is requested and applies. Never returns Auto. Deterministic: a function of
/// the call and the topology.
[[nodiscard]] Algorithm resolve_algorithm(Algorithm requested, const topo::Topology& topology, const GroupCall& call);

/// Stages of `call` under a resolved algorithm: 1 for ring, tree and nccl, hierarchical_stage_count for
/// hierarchical, direct_stage_count for direct. std::logic_error for Auto (resolve it first).
[[nodiscard]] std::uint32_t stage_count(Algorithm resolved, const topo::Topology& topology, const GroupCall& call);

/// The ring a stage runs its steps on, which calibrated step-cost rows (step_costs.hpp) are measured on:
/// its kind, members and buffer. members 0: the stage is no ring of the group's (a tree, direct
/// exchanges, NCCL's channels), and takes the rows measured on any group size.
struct StageRing {
  CollKind kind = CollKind::AllReduce;
  std::uint32_t members = 0;
  double bytes = 0;
};
/// Stage `stage` of `call` under a resolved algorithm: for a ring the group's ring over S; for a
/// hierarchical collective the intra- or inter-node ring of that stage over its own buffer (S or S/L);
/// members 0 for the others.
[[nodiscard]] StageRing stage_ring(Algorithm resolved, const topo::Topology& topology, const GroupCall& call,
                                   std::uint32_t stage);

/// Routes stage `stage` of `call` under a resolved algorithm into `out` (cleared first). Where the call
/// carries calibrated step-cost rows, the stage's row (by stage_ring) sets its step overhead and
/// `out.bandwidth_scale`; a stage no row covers pays the machine's step overhead at full bandwidth. `load` may be
/// null (no adaptive routing input). Where the topology routes in parts (Topology::route_parts() = P >
/// 1: adaptive dragonflies with adaptive_parts), the stage is routed P times under different flow keys,
/// each time seeing the earlier ones as load, into P times the bundles, each with 1/P of the bytes.
void route_stage(Algorithm resolved, const topo::Topology& topology, const GroupCall& call, std::uint32_t stage,
                 const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out);

/// What `collectives.algorithm: nccl`'s tuner sees of `call` on `topology` (nccl_tuner.hpp): n, N, the
/// slowest hop between consecutive members of the first node, one hop to the next node, the distinct NIC
/// rails the first node's members send through.
[[nodiscard]] TunerInputs nccl_inputs(const topo::Topology& topology, const GroupCall& call);

/// What tune's analytic stage knows of a grid dimension (sim/tune/analytic.hpp): its routed ring's
/// per-member bandwidth and per-step latency and, under nccl, the library's profile and what its tuner
/// sees of the dimension's groups (kind and bytes are the collective's, not these inputs').
struct AnalyticLink {
  double bandwidth_Bps = 0;
  double step_latency_s = 0;
  const NcclProfile* nccl = nullptr;
  const TunerInputs* nccl_inputs = nullptr;
};
/// A collective's time on such a dimension, in two parts: its bytes through (shared with the other
/// collectives in flight on the dimension) and its latency after them.
struct AnalyticCost {
  double bandwidth_s = 0;
  double latency_s = 0;
};
/// What tune's analytic stage charges a collective of `kind` over p >= 2 members and a buffer S under
/// `requested` (the scenario's algorithm, as registered): the ring closed form for ring, tree,
/// hierarchical and auto; NCCL's tuner choice (its bandwidth time; its latency plus pipeline fill) for
/// nccl, which needs link.nccl and link.nccl_inputs; direct's bytes and steps for direct and for every
/// all-to-all.
[[nodiscard]] AnalyticCost analytic_cost(Algorithm requested, CollKind kind, std::uint32_t p, double S,
                                         const AnalyticLink& link);

}  // namespace exasim::collectives
