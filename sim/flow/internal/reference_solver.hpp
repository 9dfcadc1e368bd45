#pragma once
// Solver::Reference of FlowNetwork: every active path re-solved at every resolve(), every link taken
// into the heap and the heap emptied, no lone entries, node-local flows or mirrored links: the
// straightforward solver that tests hold the others against (ComponentsSolver matches it bit for bit).
// It is ComponentsSolver's filling seeded from every link.
//
// LIMITATIONS:
//  - work in proportion to all active paths and links at every change: for tests and small cases only.

#include "sim/flow/internal/components_solver.hpp"

namespace exasim::flow {

class ReferenceSolver final : public ComponentsSolver {
 public:
  static constexpr SolverFeatures kFeatures{};  ///< keeps nothing beyond links, entries and flows

  ReferenceSolver() : ComponentsSolver(true) {}
};

}  // namespace exasim::flow
