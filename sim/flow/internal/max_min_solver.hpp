#pragma once
// A max-min solver of FlowNetwork (flow_network.hpp): re-solves the rates of the paths a change may
// move, from the bookkeeping of network_state.hpp. One class per Solver: LocalSolver
// (local_solver.hpp), ComponentsSolver (components_solver.hpp) and ReferenceSolver
// (reference_solver.hpp). Each declares once, in a static kFeatures, what it needs the bookkeeping
// to keep (SolverFeatures); the network is built with those, so the per-link loops of add() and
// finish() test plain bools and call no solver.
//
// LIMITATIONS:
//  - a solver is bound to one NetworkState for its lifetime (FlowNetwork owns both and is not movable).

#include "sim/flow/internal/network_state.hpp"

namespace exasim::flow {

class MaxMinSolver {
 public:
  MaxMinSolver() = default;
  MaxMinSolver(const MaxMinSolver&) = delete;
  MaxMinSolver& operator=(const MaxMinSolver&) = delete;
  virtual ~MaxMinSolver() = default;
  /// Re-solves from what changed since the last call (the state's dirty_links_ and touched_paths_,
  /// which it empties): every path whose rate it decides gets its new_rate and goes to comp_paths_
  /// (cleared first). Paths in fresh_lone_ already have theirs.
  virtual void solve(NetworkState& state) = 0;
  /// Whether the last solve() solved path p (and listed it in comp_paths_).
  [[nodiscard]] virtual bool solved(const NetworkState& state, NetworkState::PathId p) const = 0;

 protected:
  // The bookkeeping's records, by their short names.
  using PathId = NetworkState::PathId;
  using Path = NetworkState::Path;
  using Entry = NetworkState::Entry;
  using EntryList = NetworkState::EntryList;
  using LinkState = NetworkState::LinkState;
  using RouteEntry = NetworkState::RouteEntry;
  using FillScratch = NetworkState::FillScratch;
  using Share = NetworkState::Share;
  static constexpr std::uint32_t kNoId = NetworkState::kNoId;
};

}  // namespace exasim::flow
