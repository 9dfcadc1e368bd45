#pragma once
// Flows sharing links by max-min fairness (equal weights: the CM02 sharing of SimGrid without its
// latency weighting), re-solved only for the links and flows an event touches.
//
// A flow's route may cross a link more than once: a ring collective is one flow (a "bundle") whose
// route is the concatenation of its hops' routes, and a link that k hops cross carries k times the
// bundle's rate. The solver is weighted max-min with these multiplicities: a link's fair share is its
// residual capacity over the number of unfrozen route entries on it.
//
// Flows that take exactly the same route share one Path: max-min gives them the same rate, so the
// solver handles the path once, weighted by its flow count, instead of each flow (AxoNN keeps several
// collectives of one group in flight, and every one of them takes the group's ring). Each flow keeps
// its own bytes and its own predicted finish.
//
// The class is the network's front: the bookkeeping (links, entry lists, paths, flows, loads, holds,
// mirrored and sleeping links) lives in NetworkState (internal/network_state.hpp), which add(),
// finish() and hold() keep up to date and which marks the touched links dirty; resolve() hands it to
// the max-min solver the Solver names, one class each behind MaxMinSolver (internal/max_min_solver.hpp):
//  - Local (default, LocalSolver: internal/local_solver.hpp, local_solve.cpp): a path's rate can
//    change only if its bottleneck does (the saturated link on which it is the fastest, recorded when
//    it froze). Progressive filling runs over the paths whose flow count changed and those
//    bottlenecked on a dirty link, every other path held at its rate as fixed load; a held path joins
//    the filling, in level order, where the filling shows it must. Links keep their loads so that
//    joining a link costs no read of its entries. The max-min allocation is unique, so the result is
//    the whole component's, up to rounding. Spread placements tie thousands of paths into one
//    component through a few shared links, and re-solving all of them at every completion was 97 % of
//    the run time (docs/performance.md, "The max-min flow network and its three solvers").
//  - Components (ComponentsSolver: internal/components_solver.hpp, components_solve.cpp): the connected components of
//  the
//    dirty links, filled whole, stepping over lone links (crossed by one path only).
//  - Reference (ReferenceSolver: internal/reference_solver.hpp): every active path re-solved over
//    every link: the straightforward solver that tests hold the others against (Components matches it
//    bit for bit).
// What the bookkeeping keeps for a solver (link loads, bottlenecks, lone marks, touched paths) each
// solver declares once (SolverFeatures); the state tests plain bools in its loops, not the solver.
//
// Only flows whose rate changed get a new predicted completion; the others keep theirs.
//
// LIMITATIONS:
//  - fluid model: no packets, no per-flow window or TCP-gamma cap, no protocol overhead on the wire;
//  - a flow's rate is bounded by its links only (no endpoint injection limit beyond the NIC links);
//  - routes are fixed for the lifetime of a flow (adaptive choice happens when it starts);
//  - Solver::Local leaves a held path alone when it is off by less than 1e-13 relative (faster than a
//    saturating link, slower than its bottleneck's share, or its bottleneck within 1e-13 of full), so
//    its rates are max-min to that; link loads are kept in quanta of 2^-16 B/s. Under adaptive
//    routing such differences (and any other, down to the order of a sum) can reorder nearly
//    simultaneous events and change routes: the iteration is then ill-conditioned, see
//    docs/performance.md, "Exactness";
//  - at most 32,768 distinct link capacities (the constructor throws beyond).
//
// Flows whose route stays on one node's GPU-GPU links go to NodeFlows (node_flows.hpp), which gives
// them the same rates from much less memory; their ids carry kNodeLocal. Not under Solver::Reference: the
// reference solver handles every flow itself.

#include "sim/flow/internal/max_min_solver.hpp"
#include "sim/flow/internal/network_state.hpp"
#include "sim/flow/node_flows.hpp"
#include "sim/flow/solver.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace exasim::flow {

/// How the machine lays out the links its nodes own (topology.hpp): node n owns the ids
/// [n * links_per_node, (n + 1) * links_per_node). nodes = 0: unknown (every flow takes the general solver).
struct NodeLayout {
  std::uint32_t nodes = 0;
  std::uint32_t links_per_node = 0;
  std::uint32_t gpus_per_node = 0;
};

class FlowNetwork final : public topo::LinkLoadView {
 public:
  /// Set in the ids of flows that NodeFlows carries.
  static constexpr FlowId kNodeLocal = NetworkState::kNodeLocal;
  /// Called by resolve() for every flow whose predicted finish time changed; the prediction replaces the
  /// flow's earlier one, and infinity means it no longer moves (node_flows.hpp's change_rate()).
  using Scheduler = std::function<void(double finish_s, FlowId flow)>;

  FlowNetwork(const std::vector<topo::Link>& links, Solver solver, NodeLayout layout = {});
  /// Not copied or moved: the solver keeps a pointer into the state between calls.
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;
  ~FlowNetwork() override;

  /// Counts the links of `links` at or above first_held() as load (load()) until the flow that takes
  /// them is add()ed: the hops of a bundle routed so far, so that an adaptive choice for its next hop
  /// sees them. Below first_held() routing reads no load (set_first_held()), and nothing is held.
  void hold(const topo::LinkId* links, std::size_t count) { state_.hold(links, count); }
  /// The least link id hold() holds (default 0: every link).
  void set_first_held(topo::LinkId first) { state_.first_held_ = first; }
  [[nodiscard]] topo::LinkId first_held() const { return state_.first_held_; }
  /// A new flow of `bytes` over `route` (links may repeat). While holds are pending, `route` must be a
  /// bundle of held hops (a collective's stage, routed hop by hop): each of its entries at or above
  /// first_held() takes one hold, rather than adding to the load. Taking more holds than are pending
  /// throws std::logic_error. It gets its rate at the next resolve().
  FlowId add(std::span<const topo::LinkId> route, double bytes, std::uint64_t tag);
  FlowId add(const std::vector<topo::LinkId>& route, double bytes, std::uint64_t tag) {
    return add(std::span<const topo::LinkId>(route), bytes, tag);
  }
  /// Sleeping links (Solver::Local only). A shared link whose paths all run at most its capacity
  /// over a room of more flows than it has (its allowance) cannot be full: the solver passes over it
  /// like a lone link, each path on it held below the allowance, until a path reaches the allowance
  /// (the link wakes and joins the filling at that level) or its flows outgrow the room (it wakes).
  /// Exact: below the allowance the link cannot bind. It pays where shared links rarely bind
  /// (minimal routing, where the global links do: 0.89 of the time) and costs where they often do
  /// (adaptive routing, whose NIC links run close to their share: 1.22; Valiant: 1.30; random
  /// placement under minimal routing: 1.21): docs/performance.md, "Sleeping links". What tells them apart
  /// is the cascades: spread placements under minimal routing release 27-61 held paths a re-solve,
  /// the others 0.5-4. Sleeping::Auto follows that (a running mean of the paths a re-solve released:
  /// links go to sleep while it is above 12, and no longer once it falls below 6); the fast runtime
  /// uses it (LocalSolver's kSleepAbove and kWakeBelow). Sleeping::On is for tests.
  using Sleeping = flow::Sleeping;
  void set_sleeping(Sleeping mode) { state_.set_sleeping(mode); }
  /// Mirrored link pairs (Solver::Local and Components; before the first add()): for each (up, down),
  /// every route crosses `up` as often as `down`, and the two have the same capacity. A NIC's pair is
  /// such a pair where every inter-node hop leaves its source GPU's NIC and enters its destination's,
  /// and the traffic is rings and trees over members on distinct nodes (nic_mirrors.hpp decides):
  /// each member's NIC is crossed once each way. The down link then carries exactly the up link's
  /// entries at every moment, and its every share equals the up link's to the bit (the same paths
  /// freeze on both in the same order); the up link, the lower id, wins every tie, so the down link
  /// never decides a rate. add() leaves such down links out of the paths it builds: answers are the
  /// same, and a spread run walks ~17 % fewer route entries. Every route is checked: one that crosses
  /// a pair unequally throws std::logic_error (whoever chose the pairs was wrong). load() of a left-out
  /// link reads 0 (routing reads no NIC link).
  void set_mirrored(std::span<const std::pair<topo::LinkId, topo::LinkId>> pairs) { state_.set_mirrored(pairs); }
  [[nodiscard]] std::size_t mirrored_pairs() const { return state_.mirror_balance_.size(); }
  /// Asks the CPU to start loading the flow's record (a hint for batches of completions).
  void prefetch(FlowId flow) const {
    if (flow & kNodeLocal)
      local_->prefetch(flow & ~kNodeLocal);
    else
      __builtin_prefetch(&state_.flows_[flow]);
  }
  /// Removes a completed flow; returns its tag.
  std::uint64_t finish(FlowId flow);
  /// Re-solves what changed since the last call, at simulated time `now_s`.
  void resolve(double now_s, const Scheduler& schedule);

  /// Flows' route entries on the link (a bundle crossing it twice counts twice), held links included.
  [[nodiscard]] double load(topo::LinkId link) const override { return static_cast<double>(state_.loads_[link]); }
  [[nodiscard]] const std::uint32_t* dense_loads() const override { return state_.loads_.data(); }
  [[nodiscard]] double rate_Bps(FlowId flow) const {
    return flow & kNodeLocal ? local_->rate_Bps(flow & ~kNodeLocal) : state_.flows_[flow].rate;
  }
  [[nodiscard]] std::size_t active_flows() const { return state_.active_ + (local_ ? local_->active_flows() : 0); }
  /// Distinct routes among the active flows (for tests: flows on one route share a path).
  [[nodiscard]] std::size_t active_paths() const {
    return state_.active_paths_ + (local_ ? local_->active_paths() : 0);
  }
  /// Whether flows inside a node go to NodeFlows (see the constructor for when they do not).
  [[nodiscard]] bool node_local() const { return local_.has_value(); }
  /// The re-solves so far, of the flows this class solves (NodeFlows' node-local flows not included).
  [[nodiscard]] const SolverCounters& counters() const { return state_.counters_; }

 private:
  /// The node-local flows of machines whose node layout NodeFlows supports (see the constructor).
  [[nodiscard]] static std::optional<NodeFlows> node_flows(const std::vector<topo::Link>& links, NodeLayout layout);

  NetworkState state_;
  std::unique_ptr<MaxMinSolver> solver_;
  std::optional<NodeFlows> local_;
  std::vector<FlowId> changed_;       ///< flows whose rate the last re-solve changed, in id order
  std::vector<FlowId> sort_scratch_;  ///< for sort_ids()
};

}  // namespace exasim::flow
