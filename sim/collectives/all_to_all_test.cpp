// All-to-all (a mixture of experts' dispatch and combine): which algorithm runs it, and the bytes its
// routed stages carry against the closed forms of plan.hpp and algorithm.hpp.
#include "sim/collectives/internal/registry.hpp"
#include "sim/collectives/internal/test_support.hpp"
#include "sim/collectives/router.hpp"

#include <catch2/catch.hpp>

#include <numeric>

using namespace exasim;
using namespace exasim::collectives;
using namespace exasim::collectives::testing;

namespace {

constexpr double kBytes = 8e6;  // S in the test names

}  // namespace

TEST_CASE("an all-to-all runs direct, or hierarchical where asked and the group spans nodes evenly", "[unit]") {
  const auto two_nodes = simple_a100(2);
  const schedule::ProcessGrid grid({{"x", 8}});  // 4 GPUs on each of 2 nodes
  for (const auto kind : {CollKind::AllToAll, CollKind::AllToAllReverse}) {
    const auto call = call_of(grid, 0, kind, kBytes, 0);
    for (const auto requested : {Algorithm::Ring, Algorithm::Tree, Algorithm::Auto, Algorithm::Nccl, Algorithm::Direct})
      CHECK(resolve_algorithm(requested, two_nodes, call) == Algorithm::Direct);
    CHECK(resolve_algorithm(Algorithm::Hierarchical, two_nodes, call) == Algorithm::Hierarchical);
  }
  const schedule::ProcessGrid inside({{"x", 4}});  // one node: nothing to split
  CHECK(resolve_algorithm(Algorithm::Hierarchical, two_nodes, call_of(inside, 0, CollKind::AllToAll, kBytes, 0)) ==
        Algorithm::Direct);
}

TEST_CASE("direct all-to-all: member i sends S w_j to j (AllToAll) or S w_i (its reverse)", "[unit]") {
  const auto machine = simple_a100(2);
  const schedule::ProcessGrid grid({{"x", 8}});
  const std::vector<double> shares = {0.3, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05};  // sums to 0.95: 5 % dropped
  SECTION("uniform: S/p a pair, (p-1)/p S a member") {
    const auto stage = route_one(Algorithm::Direct, machine, call_of(grid, 0, CollKind::AllToAll, kBytes, 0), 0);
    CHECK(stage.route.bundles.size() == 56);
    for (const auto& b : stage.route.bundles) CHECK(b.bytes == Approx(kBytes / 8));
    CHECK(stage.route.rank0_wire_bytes == Approx(7.0 / 8 * kBytes));
  }
  for (const auto kind : {CollKind::AllToAll, CollKind::AllToAllReverse}) {
    auto call = call_of(grid, 0, kind, kBytes, 0);
    call.shares = shares.data();
    const auto stage = route_one(Algorithm::Direct, machine, call, 0);
    REQUIRE(stage.hops.size() == 56);
    for (const auto& hop : stage.hops) {
      const double w = shares[kind == CollKind::AllToAll ? hop.dst : hop.src];
      CHECK(stage.route.bundles[hop.bundle].bytes == Approx(kBytes * w));
    }
    const auto sent = sent_by_gpu(stage);
    for (std::uint32_t i = 0; i < 8; ++i) {
      const double closed = kind == CollKind::AllToAll ? kBytes * (0.95 - shares[i]) : 7 * kBytes * shares[i];
      CHECK(sent.at(i) == Approx(closed));
      CHECK(schedule::all_to_all_wire_bytes(kind, 8, kBytes, shares.data(), i) == Approx(closed));
    }
    CHECK(stage.route.rank0_wire_bytes == Approx(sent.at(0)));
  }
}

TEST_CASE("hierarchical all-to-all: inside the nodes first, then one transfer per node pair and local index",
          "[unit]") {
  const auto machine = simple_a100(2);
  const schedule::ProcessGrid grid({{"x", 8}});
  SECTION("uniform: (L-1)/L S inside, (n-1)/n S across, per member") {
    const auto stages = route_all(Algorithm::Hierarchical, machine, call_of(grid, 0, CollKind::AllToAll, kBytes, 0));
    REQUIRE(stages.size() == 2);
    for (const auto& [gpu, bytes] : sent_by_gpu(stages[0])) CHECK(bytes == Approx(3.0 / 4 * kBytes));
    for (const auto& [gpu, bytes] : sent_by_gpu(stages[1])) CHECK(bytes == Approx(1.0 / 2 * kBytes));
    for (const auto& hop : stages[0].hops) CHECK(hop.src / 4 == hop.dst / 4);  // the first stage stays in nodes
    for (const auto& hop : stages[1].hops) CHECK(hop.src % 4 == hop.dst % 4);  // the second keeps local indices
    CHECK(hierarchical_all_to_all_wire_bytes(2, 4, kBytes) == Approx((3.0 / 4 + 1.0 / 2) * kBytes));
  }
  SECTION("with shares, the bytes between nodes are the direct exchange's") {
    const std::vector<double> shares = {0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05};
    for (const auto kind : {CollKind::AllToAll, CollKind::AllToAllReverse}) {
      auto call = call_of(grid, 0, kind, kBytes, 0);
      call.shares = shares.data();
      const auto stages = route_all(Algorithm::Hierarchical, machine, call);
      double across = 0, direct_across = 0;
      for (const auto& hop : stages[1].hops) across += stages[1].route.bundles[hop.bundle].bytes;
      for (std::uint32_t i = 0; i < 8; ++i)
        for (std::uint32_t j = 0; j < 8; ++j)
          if (i / 4 != j / 4) direct_across += schedule::all_to_all_pair_bytes(kind, 8, kBytes, shares.data(), i, j);
      CHECK(across == Approx(direct_across));
    }
  }
}
