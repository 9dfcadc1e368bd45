// The table of algorithms (internal/registry.hpp): names, and the parts every entry must register.
#include "sim/collectives/algorithm.hpp"

#include "sim/collectives/internal/registry.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace exasim::collectives;

TEST_CASE("every registered algorithm has one name, parsed back to it and listed once", "[unit]") {
  std::set<std::string_view> names;
  for (Algorithm a : kAlgorithms) {
    CAPTURE(to_string(a));
    CHECK(parse_algorithm(to_string(a)) == a);
    CHECK(names.insert(to_string(a)).second);
    CHECK(algorithm_names().find(std::string(to_string(a))) != std::string::npos);
  }
  CHECK(algorithm_names() == "ring, tree, hierarchical, auto, nccl, direct");
  CHECK_FALSE(parse_algorithm("star"));
  CHECK_FALSE(parse_algorithm("Ring"));
}

TEST_CASE("every entry registers what the router, auto, tune and the emulation ask of it", "[unit]") {
  for (Algorithm a : kAlgorithms) {
    CAPTURE(to_string(a));
    const auto& e = detail::entry(a);
    CHECK(e.resolve != nullptr);
    CHECK(e.analytic_cost != nullptr);
    CHECK((e.applies == nullptr) == (e.estimate_s == nullptr));  // auto's candidates register both
    if (a == Algorithm::Auto) {
      // It resolves to another algorithm first: no stages of its own, no emulation.
      CHECK(e.stage_count == nullptr);
      CHECK(e.route_stage == nullptr);
      CHECK(emulated_by(a) == Algorithm::Auto);
      continue;
    }
    CHECK(e.stage_count != nullptr);
    CHECK(e.route_stage != nullptr);
    CHECK(emulated_by(a) != Algorithm::Auto);
    CHECK(emulated_by(emulated_by(a)) == emulated_by(a));  // an emulation runs as itself
  }
  CHECK(emulated_by(Algorithm::Nccl) == Algorithm::Ring);
  // Auto's candidates are ring, tree and hierarchical, in that order.
  std::string candidates;
  for (Algorithm a : kAlgorithms)
    if (detail::entry(a).estimate_s != nullptr) candidates += std::string(to_string(a)) + " ";
  CHECK(candidates == "ring tree hierarchical ");
}

TEST_CASE("the runtimes' questions: which join any two members, which split by node, which are cycles", "[unit]") {
  for (Algorithm a : {Algorithm::Tree, Algorithm::Auto, Algorithm::Nccl, Algorithm::Direct})
    CHECK(joins_any_members(a));
  for (Algorithm a : {Algorithm::Ring, Algorithm::Hierarchical}) CHECK_FALSE(joins_any_members(a));
  for (Algorithm a : kAlgorithms) CHECK(may_split_by_node(a) == (a == Algorithm::Hierarchical || a == Algorithm::Auto));
}

TEST_CASE("tune's analytic cost: the ring's, the tuner's under nccl with inputs, direct's steps", "[unit]") {
  const AnalyticLink link{25e9, 3e-6, nullptr, nullptr};
  const double S = 1e8;
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Auto, Algorithm::Nccl}) {
    CAPTURE(to_string(a));
    const auto cost = analytic_cost(a, CollKind::AllReduce, 8, S, link);
    CHECK(cost.bandwidth_s == Approx(ring_wire_bytes(CollKind::AllReduce, 8, S) / 25e9));
    CHECK(cost.latency_s == Approx(ring_steps(CollKind::AllReduce, 8) * 3e-6));
  }
  const auto direct = analytic_cost(Algorithm::Direct, CollKind::AllReduce, 8, S, link);
  CHECK(direct.bandwidth_s == Approx(ring_wire_bytes(CollKind::AllReduce, 8, S) / 25e9));
  CHECK(direct.latency_s == Approx(2 * 3e-6));
  // A Send/Recv is the ring's one transfer under every algorithm (context parallelism's ring steps).
  for (Algorithm a : kAlgorithms) {
    CAPTURE(to_string(a));
    const auto send = analytic_cost(a, CollKind::Send, 8, S, link);
    CHECK(send.bandwidth_s == Approx(S / 25e9));
    CHECK(send.latency_s == Approx(3e-6));
    CHECK(analytic_cost(a, CollKind::Recv, 8, S, link).bandwidth_s == 0);
  }
}
