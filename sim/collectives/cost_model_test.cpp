// auto's estimate and choice (cost_model.hpp) on simple-a100's shape.
#include "sim/collectives/internal/cost_model.hpp"

#include "sim/collectives/double_binary_tree.hpp"
#include "sim/collectives/internal/test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace exasim;
using namespace exasim::collectives;
using exasim::collectives::testing::simple_a100;

namespace {

constexpr double kOverhead = 1e-6;
constexpr double kSmall = 64.0 * 1024, kLarge = 64.0 * 1024 * 1024;

GroupCall call_of(const schedule::ProcessGrid& grid, std::uint8_t dim, CollKind kind, double bytes) {
  return testing::call_of(grid, dim, kind, bytes, kOverhead);
}

}  // namespace

TEST_CASE("cost inputs sample an intra-node and an inter-node hop", "[unit]") {
  const auto topology = simple_a100(16);
  const schedule::ProcessGrid grid({{"x", 64}});
  const auto call = call_of(grid, 0, CollKind::AllReduce, kLarge);
  const auto in = cost_inputs(topology, call, group_layout(topology, call));
  CHECK(in.p == 64);
  CHECK(in.nodes == 16);
  CHECK(in.per_node == 4);
  CHECK(in.intra.latency_s == Approx(1e-6));
  CHECK(in.intra.bandwidth_Bps == Approx(100e9));
  CHECK(in.inter.latency_s == Approx(2.35e-6));
  CHECK(in.inter.bandwidth_Bps == Approx(25e9));
  CHECK(in.nic_share == 1);
  CHECK(in.step_overhead_s == kOverhead);

  // Two GPUs per NIC: the first node's 4 members send through 2 NICs.
  const auto shared = simple_a100(16, 2);
  CHECK(cost_inputs(shared, call, group_layout(shared, call)).nic_share == 2);

  // One node: no inter-node hop.
  const schedule::ProcessGrid four({{"x", 4}});
  const auto local = cost_inputs(topology, call_of(four, 0, CollKind::AllReduce, kLarge),
                                 group_layout(topology, call_of(four, 0, CollKind::AllReduce, kLarge)));
  CHECK(local.nodes == 1);
  CHECK(local.inter.latency_s == 0);
  CHECK(std::isinf(local.inter.bandwidth_Bps));
}

TEST_CASE("auto's estimate charges the whole group's step-cost row", "[unit]") {
  const auto topology = simple_a100(16);
  const schedule::ProcessGrid grid({{"x", 64}});
  const std::vector<StepCost> rows = {
      {CollKind::AllReduce, kLarge, 7e-6, 0.5, 4},   // a 4-member ring's row: not this group's
      {CollKind::AllReduce, kLarge, 9e-6, 0.5, 64},  // the group's ring
  };
  auto call = call_of(grid, 0, CollKind::AllReduce, kLarge);
  call.step_costs = &rows;
  CHECK(cost_inputs(topology, call, group_layout(topology, call)).step_overhead_s == 9e-6);
  // No row of the group's kind: the machine's overhead.
  call.kind = CollKind::AllGather;
  CHECK(cost_inputs(topology, call, group_layout(topology, call)).step_overhead_s == kOverhead);
}

TEST_CASE("estimates are steps x (alpha + overhead) + bytes / beta", "[unit]") {
  CostInputs in;
  in.p = 64;
  in.nodes = 16;
  in.per_node = 4;
  in.intra = {1e-6, 100e9};
  in.inter = {2.35e-6, 25e9};
  in.step_overhead_s = kOverhead;
  const double S = 1e8;
  CHECK(estimate_s(Algorithm::Ring, CollKind::AllReduce, in, S) == Approx(126 * 3.35e-6 + 2.0 * 63 / 64 * S / 25e9));
  CHECK(estimate_s(Algorithm::Tree, CollKind::AllReduce, in, S) ==
        Approx(2 * binary_tree_depth(64) * 3.35e-6 + tree_max_wire_bytes(64, S) / 25e9));
  CHECK(binary_tree_depth(64) == 6);
  // RS intra: 3 x 2 us + 3/4 S / 100 GB/s; AR inter of S/4: 30 x 3.35 us + 2 x 15/16 x S/4 / 25 GB/s; AG intra.
  CHECK(estimate_s(Algorithm::Hierarchical, CollKind::AllReduce, in, S) ==
        Approx(2 * (3 * 2e-6 + 0.75 * S / 100e9) + 30 * 3.35e-6 + 2.0 * 15 / 16 * S / 4 / 25e9));
  in.nic_share = 2;  // the inter stage's bandwidth halves, the ring's does not
  CHECK(estimate_s(Algorithm::Hierarchical, CollKind::AllReduce, in, S) ==
        Approx(2 * (3 * 2e-6 + 0.75 * S / 100e9) + 30 * 3.35e-6 + 2.0 * 15 / 16 * S / 4 / 12.5e9));
  CHECK(estimate_s(Algorithm::Ring, CollKind::AllReduce, in, S) == Approx(126 * 3.35e-6 + 2.0 * 63 / 64 * S / 25e9));
  CHECK(std::isinf(estimate_s(Algorithm::Tree, CollKind::AllGather, in, S)));
  // Only ring, tree and hierarchical register an estimate: auto never picks the others.
  for (Algorithm other : {Algorithm::Auto, Algorithm::Nccl, Algorithm::Direct}) {
    CHECK_FALSE(applies(other, CollKind::AllReduce, in));
    CHECK(std::isinf(estimate_s(other, CollKind::AllReduce, in, S)));
  }
  in.nodes = 1;
  CHECK(std::isinf(estimate_s(Algorithm::Hierarchical, CollKind::AllReduce, in, S)));
}

TEST_CASE("auto: tree for small all-reduces, ring or hierarchical for large ones", "[unit]") {
  const auto one = simple_a100(1), sixteen = simple_a100(16);
  const schedule::ProcessGrid four({{"x", 4}}), sixty_four({{"x", 64}});
  auto pick = [](const topo::Topology& t, const schedule::ProcessGrid& g, CollKind kind, double bytes) {
    return resolve_algorithm(Algorithm::Auto, t, call_of(g, 0, kind, bytes));
  };
  // One node of 4: tree's 4 steps beat ring's 6 below ~800 KB; above, ring's 1.5 S beats tree's 2 S.
  CHECK(pick(one, four, CollKind::AllReduce, kSmall) == Algorithm::Tree);
  CHECK(pick(one, four, CollKind::AllReduce, kLarge) == Algorithm::Ring);
  CHECK(pick(one, four, CollKind::AllGather, kSmall) == Algorithm::Ring);  // nothing else applies
  // 16 nodes x 4: tree's 12 steps win small buffers, hierarchical's 4 NICs at once win large ones.
  CHECK(pick(sixteen, sixty_four, CollKind::AllReduce, kSmall) == Algorithm::Tree);
  CHECK(pick(sixteen, sixty_four, CollKind::AllReduce, kLarge) == Algorithm::Hierarchical);
  CHECK(pick(sixteen, sixty_four, CollKind::AllGather, kSmall) == Algorithm::Hierarchical);
  CHECK(pick(sixteen, sixty_four, CollKind::ReduceScatter, kLarge) == Algorithm::Hierarchical);
  // The crossovers of docs/collectives.md section 6.
  CHECK(pick(one, four, CollKind::AllReduce, 7.9e5) == Algorithm::Tree);
  CHECK(pick(one, four, CollKind::AllReduce, 8.1e5) == Algorithm::Ring);
  CHECK(pick(sixteen, sixty_four, CollKind::AllReduce, 1.55e6) == Algorithm::Tree);
  CHECK(pick(sixteen, sixty_four, CollKind::AllReduce, 1.58e6) == Algorithm::Hierarchical);
  const schedule::ProcessGrid eight({{"x", 8}});  // 2 nodes x 4: hierarchical at every size
  for (double bytes : {8.0, kSmall, kLarge})
    CHECK(pick(sixteen, eight, CollKind::AllReduce, bytes) == Algorithm::Hierarchical);
  // Send/Recv never leave ring.
  CHECK(pick(sixteen, sixty_four, CollKind::Send, kSmall) == Algorithm::Ring);
}

TEST_CASE("auto breaks ties towards ring and is deterministic", "[unit]") {
  // p = 2 on one node: ring and tree both take 2 steps and send S each.
  CostInputs in;
  in.p = 2;
  in.intra = {1e-6, 100e9};
  in.step_overhead_s = kOverhead;
  CHECK(estimate_s(Algorithm::Ring, CollKind::AllReduce, in, kLarge) ==
        Approx(estimate_s(Algorithm::Tree, CollKind::AllReduce, in, kLarge)));
  CHECK(choose_fastest(CollKind::AllReduce, in, kLarge) == Algorithm::Ring);
  const auto topology = simple_a100(16);
  const schedule::ProcessGrid grid({{"x", 64}});
  for (double bytes : {1e3, 1e5, 1e6, 2e6, 1e7, 1e9}) {
    const auto call = call_of(grid, 0, CollKind::AllReduce, bytes);
    CHECK(resolve_algorithm(Algorithm::Auto, topology, call) == resolve_algorithm(Algorithm::Auto, topology, call));
  }
}
