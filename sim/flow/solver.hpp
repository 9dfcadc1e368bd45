#pragma once
// The choice of max-min solver of FlowNetwork (flow_network.hpp), apart so that runtime options can
// name it without the network's header.

#include <cstdint>

namespace exasim::flow {

/// How FlowNetwork re-solves rates after a change; all three give the same max-min rates. Each is a
/// class behind MaxMinSolver (internal/max_min_solver.hpp): LocalSolver, ComponentsSolver, ReferenceSolver.
enum class Solver : std::uint8_t {
  /// Default: progressive filling of only the paths whose rates can change, the others held, joining
  /// as the filling finds they must (LocalSolver, local_solve.cpp); rates equal to Components' within 1e-13.
  Local,
  /// Every connected component of the changed links (bit for bit Reference's rates).
  Components,
  /// Every active flow at every change, all links, no shortcuts: what tests hold the others against.
  Reference,
};

/// What a FlowNetwork's re-solves did, counted as they go (a few additions per re-solve): the work of a
/// spread placement follows the paths filled and the route entries they bring, not the events
/// (docs/performance.md, "Current figures"), and scale_bench prints these beside its wall times.
struct SolverCounters {
  std::uint64_t resolves = 0;        ///< re-solves that filled at least one path
  std::uint64_t paths_filled = 0;    ///< paths given a rate, summed over re-solves (a path counts once per re-solve)
  std::uint64_t paths_released = 0;  ///< Solver::Local: of those, held paths the filling released
  /// Route entries of the paths filled (Solver::Local: of the paths entering the region), walked at
  /// least once more each when the path freezes: the solver's memory traffic.
  std::uint64_t route_entries = 0;
  std::uint64_t rate_changes = 0;  ///< flows whose rate a re-solve changed (each gets a new predicted end)
  std::uint64_t sleeps = 0;        ///< Solver::Local with sleeping links: links put to sleep
  std::uint64_t wakes = 0;         ///< ... and woken (by a path at the allowance, or by more flows)
};

}  // namespace exasim::flow
