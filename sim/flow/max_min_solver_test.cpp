#include "sim/flow/internal/components_solver.hpp"
#include "sim/flow/internal/local_solver.hpp"
#include "sim/flow/internal/reference_solver.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace exasim;
using flow::NetworkState;
using flow::SolverFeatures;

TEST_CASE("each solver declares what the bookkeeping keeps for it", "[unit]") {
  constexpr SolverFeatures local = flow::LocalSolver::kFeatures;
  CHECK((local.keeps_link_loads && local.records_bottlenecks && local.tracks_touched_paths &&
         local.marks_lone_entries && local.sleeps_links && local.takes_shortcuts));
  constexpr SolverFeatures components = flow::ComponentsSolver::kFeatures;
  CHECK((!components.keeps_link_loads && !components.records_bottlenecks && !components.tracks_touched_paths &&
         components.marks_lone_entries && !components.sleeps_links && components.takes_shortcuts));
  constexpr SolverFeatures reference = flow::ReferenceSolver::kFeatures;
  CHECK((!reference.keeps_link_loads && !reference.records_bottlenecks && !reference.tracks_touched_paths &&
         !reference.marks_lone_entries && !reference.sleeps_links && !reference.takes_shortcuts));
}

TEST_CASE("a solver re-solves the paths the bookkeeping marked and lists them", "[unit]") {
  // Two links of 10 and 4 B/s; flow a crosses both, flow b the first only: a gets 4, b the rest.
  const std::vector<topo::Link> links{{.bandwidth_Bps = 10}, {.bandwidth_Bps = 4}};
  const std::vector<topo::LinkId> both{0, 1}, first{0};
  const auto check = [&](SolverFeatures features, flow::MaxMinSolver& solver) {
    NetworkState state(links, features);
    const flow::FlowId a = state.add(both, 100, 1);
    const flow::FlowId b = state.add(first, 100, 2);
    solver.solve(state);
    for (const NetworkState::PathId p : state.fresh_lone_)
      if (!solver.solved(state, p)) state.comp_paths_.push_back(p);
    CHECK(state.comp_paths_.size() == 2);
    CHECK(state.paths_[state.flows_[a].path].new_rate == 4);
    CHECK(state.paths_[state.flows_[b].path].new_rate == 6);
    CHECK(state.dirty_links_.empty());
    CHECK(state.touched_paths_.empty());
  };
  flow::LocalSolver local;
  check(flow::LocalSolver::kFeatures, local);
  flow::ComponentsSolver components;
  check(flow::ComponentsSolver::kFeatures, components);
  flow::ReferenceSolver reference;
  check(flow::ReferenceSolver::kFeatures, reference);
}
