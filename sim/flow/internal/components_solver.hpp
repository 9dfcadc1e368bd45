#pragma once
// Solver::Components of FlowNetwork: the connected components of the dirty links (links <-> paths
// that cross them, transitively), each filled whole by progressive filling (a lone path simply gets
// its tightest link). It steps over lone links (crossed by one path only: see
// NetworkState::RouteEntry and fill()) and stops filling once every path is frozen. Its rates are
// ReferenceSolver's bit for bit.
//
// LIMITATIONS:
//  - every path of a touched component is re-solved: spread placements tie thousands of paths into one
//    component, and most of them keep their rates (LocalSolver re-solves only those that move).

#include "sim/flow/internal/max_min_solver.hpp"

#include <vector>

namespace exasim::flow {

class ComponentsSolver : public MaxMinSolver {
 public:
  static constexpr SolverFeatures kFeatures{.marks_lone_entries = true, .takes_shortcuts = true};

  ComponentsSolver() : ComponentsSolver(false) {}
  void solve(NetworkState& s) override;
  [[nodiscard]] bool solved(const NetworkState& s, NetworkState::PathId p) const override {
    return s.paths_[p].epoch == s.epoch_;
  }

 protected:
  /// every_link: seed from every link with entries, key every link and empty the heap (ReferenceSolver).
  explicit ComponentsSolver(bool every_link) : every_link_(every_link) {}

 private:
  /// Progressive filling of the component just collected: its last `paths` paths, keys in heap_.
  void fill(NetworkState& s, std::size_t paths, std::uint32_t frozen_mark);

  const bool every_link_;
  std::vector<topo::LinkId> stack_;  ///< the depth-first search's links to visit
  std::vector<Share> heap_;          ///< the keys of the component being solved
};

}  // namespace exasim::flow
