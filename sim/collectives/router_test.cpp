// The routed stages of every algorithm against the closed forms of algorithm.hpp.
#include "sim/collectives/router.hpp"

#include "sim/collectives/double_binary_tree.hpp"
#include "sim/collectives/flow_key.hpp"
#include "sim/collectives/group_layout.hpp"
#include "sim/collectives/internal/registry.hpp"
#include "sim/collectives/internal/test_support.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace exasim;
using namespace exasim::collectives;
using namespace exasim::collectives::testing;

namespace {

// simple_a100 (test_support.hpp): GPU-GPU hops of 1 us; NIC up (1 us + 350 ns switch), NIC down (1 us).
constexpr double kIntraLatency = 1e-6, kInterLatency = 2.35e-6, kRouterOverhead = 2e-6;
constexpr double kRouteBytes = 64e6;  // S in the test names and comments

GroupCall routed_call(const schedule::ProcessGrid& grid, std::uint8_t dim, CollKind kind, double bytes,
                      const std::vector<std::uint32_t>* gpu_of_rank = nullptr) {
  return testing::call_of(grid, dim, kind, bytes, kRouterOverhead, gpu_of_rank);
}

}  // namespace

TEST_CASE("ring keeps one stage, one bundle and the flow keys of before", "[unit]") {
  // A rail-optimised fat tree with 4 spines: the flow key picks the spine, so the keys show.
  const topo::FatTree tree(topo::testing::nvswitch_rail_tree(2, 4));
  const schedule::ProcessGrid grid({{"x", 16}});
  auto call = routed_call(grid, 0, CollKind::AllReduce, kRouteBytes);
  call.seed = 7;
  call.group_id = 3;
  call.sequence = 5;
  REQUIRE(resolve_algorithm(Algorithm::Ring, tree, call) == Algorithm::Ring);
  REQUIRE(stage_count(Algorithm::Ring, tree, call) == 1);
  const auto stage = route_one(Algorithm::Ring, tree, call, 0);
  REQUIRE(stage.route.bundles.size() == 1);
  std::vector<topo::LinkId> expected;
  for (std::uint32_t k = 0; k < 16; ++k)
    tree.route(k, (k + 1) % 16, collective_flow_key(7, 0, 3, 5, k), nullptr, expected);
  CHECK(stage.route.links == expected);
  CHECK(stage.route.bundles[0].bytes == Approx(2.0 * 15 / 16 * kRouteBytes));
  CHECK(stage.route.rank0_wire_bytes == Approx(2.0 * 15 / 16 * kRouteBytes));
  CHECK(stage.route.latency_s == Approx(30 * (slowest_hop_s(stage) + kRouterOverhead)));
}

TEST_CASE("tree all-reduce: two bundles of every tree edge up and down, S/2 per hop", "[unit]") {
  const auto one = simple_a100(1), four = simple_a100(4);
  for (const topo::Topology* topology :
       {static_cast<const topo::Topology*>(&one), static_cast<const topo::Topology*>(&four)}) {
    for (std::uint32_t p : {2u, 3u, 4u, 7u, 8u, 16u}) {
      if (p > topology->gpu_count()) continue;
      CAPTURE(p, topology->node_count());
      const schedule::ProcessGrid grid({{"x", p}});
      const auto call = routed_call(grid, 0, CollKind::AllReduce, kRouteBytes);
      REQUIRE(resolve_algorithm(Algorithm::Tree, *topology, call) == Algorithm::Tree);
      REQUIRE(stage_count(Algorithm::Tree, *topology, call) == 1);
      const auto stage = route_one(Algorithm::Tree, *topology, call, 0);
      REQUIRE(stage.route.bundles.size() == 2);
      REQUIRE(stage.hops.size() == 4 * (p - 1));
      for (const auto& bundle : stage.route.bundles) CHECK(bundle.bytes == Approx(kRouteBytes / 2));
      // Bundle t: tree t's edges up (child -> parent), then down (parent -> child), in member order.
      std::size_t h = 0;
      for (int t = 0; t < 2; ++t)
        for (int down = 0; down < 2; ++down)
          for (std::uint32_t r = 0; r < p; ++r) {
            const auto parent = double_binary_tree_links(p, r, t).parent;
            if (parent == kNoMember) continue;
            const auto& hop = stage.hops.at(h++);
            CHECK(hop.bundle == static_cast<std::size_t>(t));
            CHECK(hop.src == (down ? parent : r));
            CHECK(hop.dst == (down ? r : parent));
          }
      const auto sent = sent_by_gpu(stage);
      double total = 0;
      for (std::uint32_t r = 0; r < p; ++r) {
        CHECK(sent.at(r) == Approx(tree_wire_bytes(p, r, kRouteBytes)));
        total += sent.at(r);
      }
      CHECK(total == Approx(2.0 * (p - 1) * kRouteBytes));  // 2 trees x 2 directions x (p-1) edges x S/2
      CHECK(stage.route.rank0_wire_bytes == Approx(tree_wire_bytes(p, 0, kRouteBytes)));
      const double hop_s = p > 4 ? kInterLatency : kIntraLatency;
      CHECK(slowest_hop_s(stage) == Approx(hop_s));
      CHECK(stage.route.latency_s == Approx(2 * binary_tree_depth(p) * (hop_s + kRouterOverhead)));
    }
  }
}

TEST_CASE("tree closed forms on 8 members", "[unit]") {
  CHECK(tree_steps(8) == 6);
  CHECK(tree_steps(2) == 2);
  CHECK(tree_steps(1) == 0);
  CHECK(tree_wire_bytes(8, 4, kRouteBytes) ==
        Approx(2 * kRouteBytes));  // inner in tree 0 (parent + 2 children), leaf in tree 1
  CHECK(tree_wire_bytes(8, 0, kRouteBytes) == Approx(kRouteBytes));  // root of tree 0 (1 child), leaf of tree 1
  CHECK(tree_max_wire_bytes(8, kRouteBytes) == Approx(2 * kRouteBytes));
  CHECK(tree_wire_bytes(1, 0, kRouteBytes) == 0);
  for (std::uint32_t p = 2; p <= 256; ++p) {
    CAPTURE(p);
    double total = 0;
    for (std::uint32_t r = 0; r < p; ++r) {
      const double bytes = tree_wire_bytes(p, r, kRouteBytes);
      CHECK(bytes >= kRouteBytes);  // every member sits on an edge of each tree
      CHECK(bytes <= 2 * kRouteBytes);
      total += bytes;
    }
    CHECK(total / p == Approx(2.0 * (p - 1) / p * kRouteBytes));  // the mean member sends the ring's bytes
    CHECK(tree_steps(p) == 2 * static_cast<std::uint32_t>(std::ceil(std::log2(p))));
  }
}

TEST_CASE("tree falls back to ring for all-gather, reduce-scatter and single members", "[unit]") {
  const auto topology = simple_a100(1);
  const schedule::ProcessGrid grid({{"x", 4}});
  for (CollKind kind : {CollKind::AllGather, CollKind::ReduceScatter})
    CHECK(resolve_algorithm(Algorithm::Tree, topology, routed_call(grid, 0, kind, kRouteBytes)) == Algorithm::Ring);
  const schedule::ProcessGrid single({{"x", 1}, {"y", 4}});
  CHECK(resolve_algorithm(Algorithm::Tree, topology, routed_call(single, 0, CollKind::AllReduce, kRouteBytes)) ==
        Algorithm::Ring);
  std::vector<topo::LinkId> links;
  StageRoute out;
  CHECK_THROWS_AS(route_stage(Algorithm::Tree, topology, routed_call(grid, 0, CollKind::AllGather, kRouteBytes), 0,
                              nullptr, {}, out),
                  std::logic_error);
  CHECK_THROWS_AS(route_stage(Algorithm::Tree, topology, routed_call(grid, 0, CollKind::AllReduce, kRouteBytes), 1,
                              nullptr, {}, out),
                  std::logic_error);
}

TEST_CASE("hierarchical closed forms: ring's bytes, fewer steps", "[unit]") {
  for (CollKind kind : {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter})
    for (std::uint32_t n : {2u, 4u, 16u})
      for (std::uint32_t L : {2u, 4u, 8u}) {
        CAPTURE(schedule::to_string(kind), n, L);
        CHECK(hierarchical_wire_bytes(kind, n, L, kRouteBytes) == Approx(ring_wire_bytes(kind, n * L, kRouteBytes)));
        const std::uint32_t per_phase = (L - 1) + (n - 1);
        CHECK(hierarchical_steps(kind, n, L) == (kind == CollKind::AllReduce ? 2 * per_phase : per_phase));
      }
  // 4 nodes x 4: all-reduce = RS intra of S, AR inter of S/4, AG intra of S.
  const auto mid = hierarchical_stage(CollKind::AllReduce, 4, 4, kRouteBytes, 1);
  CHECK(mid.inter_node);
  CHECK(mid.ring_size == 4);
  CHECK(mid.bytes == Approx(kRouteBytes / 4));
  CHECK(hierarchical_stage_wire_bytes(mid) == Approx(2.0 * 3 / 4 * kRouteBytes / 4));
  CHECK(hierarchical_stage(CollKind::AllGather, 4, 4, kRouteBytes, 0).inter_node);
  CHECK_FALSE(hierarchical_stage(CollKind::ReduceScatter, 4, 4, kRouteBytes, 0).inter_node);
  CHECK(hierarchical_stage_count(CollKind::AllReduce) == 3);
  CHECK(hierarchical_stage_count(CollKind::AllGather) == 2);
  CHECK_THROWS_AS(hierarchical_stage(CollKind::AllGather, 4, 4, kRouteBytes, 2), std::logic_error);
}

TEST_CASE("hierarchical routes a ring per node, then a ring per local index", "[unit]") {
  const auto topology = simple_a100(4);
  const schedule::ProcessGrid grid({{"x", 16}});
  for (CollKind kind : {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter}) {
    CAPTURE(schedule::to_string(kind));
    const auto call = routed_call(grid, 0, kind, kRouteBytes);
    REQUIRE(resolve_algorithm(Algorithm::Hierarchical, topology, call) == Algorithm::Hierarchical);
    REQUIRE(stage_count(Algorithm::Hierarchical, topology, call) == hierarchical_stage_count(kind));
    const auto stages = route_all(Algorithm::Hierarchical, topology, call);
    double rank0 = 0;
    std::map<topo::GpuId, double> total;
    for (std::uint32_t s = 0; s < stages.size(); ++s) {
      CAPTURE(s);
      const auto& stage = stages[s];
      const auto closed = hierarchical_stage(kind, 4, 4, kRouteBytes, s);
      REQUIRE(stage.route.bundles.size() == 4);  // 4 nodes, or 4 local indices
      REQUIRE(stage.hops.size() == 16);
      for (const auto& hop : stage.hops) {
        // Intra: bundle = the node of both ends. Inter: bundle = the local index of both ends.
        if (closed.inter_node) {
          CHECK(hop.src % 4 == hop.bundle);
          CHECK(hop.dst % 4 == hop.bundle);
          CHECK(hop.dst / 4 == (hop.src / 4 + 1) % 4);
        } else {
          CHECK(hop.src / 4 == hop.bundle);
          CHECK(hop.dst == hop.bundle * 4 + (hop.src % 4 + 1) % 4);
        }
      }
      for (auto [gpu, bytes] : sent_by_gpu(stage)) {
        CHECK(bytes == Approx(hierarchical_stage_wire_bytes(closed)));
        total[gpu] += bytes;
      }
      const double hop_s = closed.inter_node ? kInterLatency : kIntraLatency;
      CHECK(slowest_hop_s(stage) == Approx(hop_s));
      CHECK(stage.route.latency_s == Approx(hierarchical_stage_steps(closed) * (hop_s + kRouterOverhead)));
      rank0 += stage.route.rank0_wire_bytes;
    }
    REQUIRE(total.size() == 16);
    for (auto [gpu, bytes] : total) CHECK(bytes == Approx(ring_wire_bytes(kind, 16, kRouteBytes)));
    CHECK(rank0 == Approx(hierarchical_wire_bytes(kind, 4, 4, kRouteBytes)));
  }
}

TEST_CASE("each stage pays the step-cost row of the ring it runs on", "[unit]") {
  // 16 members on 4 nodes of 4: hierarchical stages run 4-member rings, the flat ring 16 members.
  const auto topology = simple_a100(4);
  const schedule::ProcessGrid grid({{"x", 16}});
  const std::vector<StepCost> rows = {
      {CollKind::ReduceScatter, kRouteBytes, 1e-3, 0.5, 4},   // the intra-node ring's first stage
      {CollKind::AllReduce, kRouteBytes / 4, 2e-3, 0.25, 4},  // the inter-node ring over S/4
      {CollKind::AllGather, kRouteBytes, 3e-3, 0.8, 0},       // any size: no 4-member all-gather row
      {CollKind::AllReduce, kRouteBytes, 4e-3, 0.4, 16},      // the whole group's ring
      {CollKind::AllReduce, kRouteBytes, 5e-3, 0.9, 0},       // any size, for the tree
  };
  auto call = routed_call(grid, 0, CollKind::AllReduce, kRouteBytes);
  call.step_costs = &rows;
  call.step_overhead_s = kRouterOverhead;
  const auto stages = route_all(Algorithm::Hierarchical, topology, call);
  REQUIRE(stages.size() == 3);
  const double expected_overhead[] = {1e-3, 2e-3, 3e-3}, expected_scale[] = {0.5, 0.25, 0.8};
  for (std::uint32_t s = 0; s < 3; ++s) {
    CAPTURE(s);
    const auto closed = hierarchical_stage(CollKind::AllReduce, 4, 4, kRouteBytes, s);
    const StageRing ring = stage_ring(Algorithm::Hierarchical, topology, call, s);
    CHECK(ring.kind == closed.kind);
    CHECK(ring.members == 4);
    CHECK(ring.bytes == closed.bytes);
    const double hop_s = closed.inter_node ? kInterLatency : kIntraLatency;
    CHECK(stages[s].route.latency_s == Approx(hierarchical_stage_steps(closed) * (hop_s + expected_overhead[s])));
    CHECK(stages[s].route.bandwidth_scale == expected_scale[s]);
  }
  // The flat ring takes its 16-member row; the tree, no ring of the group's, the any-size row.
  const auto ring = route_one(Algorithm::Ring, topology, call, 0);
  CHECK(ring.route.latency_s == Approx(ring_steps(CollKind::AllReduce, 16) * (kInterLatency + 4e-3)));
  CHECK(ring.route.bandwidth_scale == 0.4);
  const auto tree = route_one(Algorithm::Tree, topology, call, 0);
  CHECK(stage_ring(Algorithm::Tree, topology, call, 0).members == 0);
  CHECK(tree.route.bandwidth_scale == 0.9);
  // A buffer above every all-gather row: the stage pays the machine's step overhead at full bandwidth.
  call.kind = CollKind::AllGather;
  call.bytes = 2 * kRouteBytes;
  const auto last = route_one(Algorithm::Hierarchical, topology, call, 1);
  CHECK(last.route.latency_s == Approx(3 * (kIntraLatency + kRouterOverhead)));
  CHECK(last.route.bandwidth_scale == 1);
}

TEST_CASE("hierarchical pairs strided members by local index", "[unit]") {
  // Dimension y of a 2 x 8 grid: ranks 0, 2, ..., 14, two on each of 4 nodes.
  const auto topology = simple_a100(4);
  const schedule::ProcessGrid grid({{"x", 2}, {"y", 8}});
  const auto call = routed_call(grid, 1, CollKind::AllReduce, kRouteBytes);
  const auto layout = group_layout(topology, call);
  CHECK(layout.nodes == 4);
  CHECK(layout.per_node == 2);
  CHECK(layout.rank0_member == 0);
  REQUIRE(resolve_algorithm(Algorithm::Hierarchical, topology, call) == Algorithm::Hierarchical);
  const auto inter = route_one(Algorithm::Hierarchical, topology, call, 1);
  REQUIRE(inter.route.bundles.size() == 2);
  for (const auto& hop : inter.hops) {
    CHECK(hop.src % 4 == 2 * hop.bundle);  // local index 0: GPUs 0, 4, 8, 12; local index 1: 2, 6, 10, 14
    CHECK(hop.dst % 4 == 2 * hop.bundle);
  }
  CHECK(inter.route.bundles[0].bytes == Approx(2.0 * 3 / 4 * kRouteBytes / 2));
}

TEST_CASE("hierarchical falls back to ring on one node, one member per node, or uneven nodes", "[unit]") {
  const auto topology = simple_a100(4);
  const schedule::ProcessGrid in_node({{"x", 4}, {"y", 4}});  // x: one node
  const schedule::ProcessGrid spread({{"x", 4}, {"y", 4}});   // y: stride 4, one member per node
  CHECK(resolve_algorithm(Algorithm::Hierarchical, topology,
                          routed_call(in_node, 0, CollKind::AllReduce, kRouteBytes)) == Algorithm::Ring);
  CHECK(resolve_algorithm(Algorithm::Hierarchical, topology,
                          routed_call(spread, 1, CollKind::AllReduce, kRouteBytes)) == Algorithm::Ring);
  // 4 ranks: 3 on node 0, 1 on node 1.
  const std::vector<std::uint32_t> uneven{0, 1, 2, 4};
  const schedule::ProcessGrid four({{"x", 4}});
  const auto call = routed_call(four, 0, CollKind::AllGather, kRouteBytes, &uneven);
  CHECK(group_layout(topology, call).per_node == 0);
  CHECK(resolve_algorithm(Algorithm::Hierarchical, topology, call) == Algorithm::Ring);
  StageRoute out;
  CHECK_THROWS_AS(route_stage(Algorithm::Hierarchical, topology, call, 0, nullptr, {}, out), std::logic_error);
  CHECK_THROWS_AS(stage_count(Algorithm::Auto, topology, call), std::logic_error);
}

TEST_CASE("direct: every ordered pair once a stage, S/p each, one step a stage", "[unit]") {
  const auto topology = simple_a100(2);
  for (CollKind kind : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce}) {
    for (std::uint32_t p : {2u, 4u, 8u}) {
      CAPTURE(schedule::to_string(kind), p);
      const schedule::ProcessGrid grid({{"x", p}});
      const auto call = routed_call(grid, 0, kind, kRouteBytes);
      REQUIRE(resolve_algorithm(Algorithm::Direct, topology, call) == Algorithm::Direct);
      REQUIRE(stage_count(Algorithm::Direct, topology, call) == direct_stage_count(kind));
      double rank0 = 0;
      for (const auto& stage : route_all(Algorithm::Direct, topology, call)) {
        REQUIRE(stage.route.bundles.size() == p * (p - 1));
        REQUIRE(stage.hops.size() == p * (p - 1));
        std::set<std::pair<topo::GpuId, topo::GpuId>> pairs;
        for (std::size_t h = 0; h < stage.hops.size(); ++h) {
          CHECK(stage.hops[h].bundle == h);  // one hop per bundle
          CHECK(stage.hops[h].src != stage.hops[h].dst);
          pairs.insert({stage.hops[h].src, stage.hops[h].dst});
        }
        CHECK(pairs.size() == p * (p - 1));
        for (auto [gpu, bytes] : sent_by_gpu(stage)) CHECK(bytes == Approx((p - 1.0) / p * kRouteBytes));
        rank0 += stage.route.rank0_wire_bytes;
        const double hop_s = p > 4 ? kInterLatency : kIntraLatency;
        CHECK(stage.route.latency_s == Approx(hop_s + kRouterOverhead));
      }
      CHECK(rank0 == Approx(direct_wire_bytes(kind, p, kRouteBytes)));
      CHECK(direct_wire_bytes(kind, p, kRouteBytes) == Approx(ring_wire_bytes(kind, p, kRouteBytes)));
      CHECK(direct_steps(kind, p) == direct_stage_count(kind));
    }
  }
  CHECK(direct_steps(CollKind::AllReduce, 1) == 0);
  const schedule::ProcessGrid grid({{"x", 4}});
  CHECK(resolve_algorithm(Algorithm::Direct, topology, routed_call(grid, 0, CollKind::Send, kRouteBytes)) ==
        Algorithm::Ring);
  const schedule::ProcessGrid single({{"x", 1}});
  CHECK(resolve_algorithm(Algorithm::Direct, topology, routed_call(single, 0, CollKind::AllGather, kRouteBytes)) ==
        Algorithm::Ring);
}

TEST_CASE("hop positions of every algorithm are distinct and leave ring's alone", "[unit]") {
  std::set<std::uint32_t> seen;
  std::size_t count = 0;
  auto add = [&](std::uint32_t position) {
    seen.insert(position);
    ++count;
  };
  const std::uint32_t p = 4096;
  for (std::uint32_t k = 0; k < p; ++k) add(k);  // ring
  for (std::uint32_t i = 0; i < 4 * (p - 1); ++i) add(hop_position(PositionTag::Tree, 0, i));
  for (std::uint32_t s = 0; s < 3; ++s)
    for (std::uint32_t i = 0; i < p; ++i) add(hop_position(PositionTag::Hierarchical, s, i));
  for (std::uint32_t s = 0; s < 2; ++s)
    for (std::uint32_t i = 0; i < 64 * 63; ++i) add(hop_position(PositionTag::Direct, s, i));
  CHECK(seen.size() == count);
  CHECK(*seen.rbegin() >= 0x8000'0000u);
}

TEST_CASE("every hop of every algorithm is a real route, and the stage pays its slowest", "[unit]") {
  // 2 scalable units x 2 nodes x 4 GPUs on NVSwitch, rail-optimised leaves, 4 spines: hops inside a
  // node, on one leaf, and across the spines have three different latencies.
  const topo::FatTree topology(topo::testing::nvswitch_rail_tree(2, 4));
  REQUIRE(topology.gpu_count() == 16);
  const schedule::ProcessGrid grid({{"x", 16}});
  for (CollKind kind : {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter}) {
    const auto call = routed_call(grid, 0, kind, kRouteBytes);
    for (Algorithm requested : kAlgorithms) {
      if (requested == Algorithm::Nccl) continue;  // its latency is the library's (nccl_test.cpp)
      const Algorithm resolved = resolve_algorithm(requested, topology, call);
      CAPTURE(schedule::to_string(kind), to_string(requested), to_string(resolved));
      const auto stages = route_all(resolved, topology, call);
      double latency_s = 0, slowest_s = 0;
      for (std::uint32_t s = 0; s < stages.size(); ++s) {
        const auto& stage = stages[s];
        for (const auto& hop : stage.hops)
          CHECK(topo::testing::route_error(topology, hop.src, hop.dst, hop.links).empty());
        std::size_t linked = 0;
        for (const auto& bundle : stage.route.bundles) linked += bundle.count;
        CHECK(linked == stage.route.links.size());
        latency_s += stage.route.latency_s;
        slowest_s = std::max(slowest_s, slowest_hop_s(stage));
        if (resolved == Algorithm::Hierarchical)  // its stages have different hops and steps
          CHECK(stage.route.latency_s ==
                Approx(hierarchical_stage_steps(hierarchical_stage(kind, 4, 4, kRouteBytes, s)) *
                       (slowest_hop_s(stage) + kRouterOverhead)));
      }
      // The registered closed form: its steps at the slowest hop (every stage's, but hierarchical's).
      CostInputs shape;
      shape.p = 16;
      shape.nodes = 4;
      shape.per_node = 4;
      const auto closed = detail::entry(resolved).closed_form(kind, shape, kRouteBytes);
      if (resolved != Algorithm::Hierarchical) CHECK(latency_s == Approx(closed.steps * (slowest_s + kRouterOverhead)));
      double rank0 = 0;
      for (const auto& stage : stages) rank0 += stage.route.rank0_wire_bytes;
      if (resolved != Algorithm::Tree) CHECK(rank0 == Approx(closed.wire_bytes));  // tree: the busiest member's
    }
  }
}

TEST_CASE("adaptive routing in parts: every stage routed once per part, each seeing the earlier", "[unit]") {
  // 8 groups of 4 switches, nodes of 4 GPUs with 2 NICs: a ring over one GPU per node of 8 nodes in
  // 8 groups crosses global links at every hop.
  auto p = topo::testing::small_dragonfly_params(8, 4, 1, 2, 12.5e9, topo::RoutingPolicy::Adaptive);
  p.adaptive_parts = 4;
  const topo::Dragonfly parted(p);
  p.adaptive_parts = 1;
  const topo::Dragonfly whole(p);
  const std::uint32_t nodes_per_group = parted.node_count() / p.groups;
  const schedule::ProcessGrid grid({{"data", 8}});
  std::vector<std::uint32_t> gpu_of_rank;
  for (std::uint32_t r = 0; r < 8; ++r) gpu_of_rank.push_back(r * nodes_per_group * p.node.gpus);
  const auto call = routed_call(grid, 0, CollKind::AllReduce, kRouteBytes, &gpu_of_rank);

  // Loads as the execution core shows them: every hop routed so far is held.
  struct HeldLoad final : topo::LinkLoadView {
    std::vector<double> held;
    [[nodiscard]] double load(topo::LinkId l) const override { return held[l]; }
  };
  const auto route_with_holds = [&](const topo::Topology& t) {
    HeldLoad load;
    load.held.assign(t.links().size(), 0);
    StageRoute out;
    route_stage(
        Algorithm::Ring, t, call, 0, &load,
        [&](const topo::LinkId* links, std::size_t count) {
          for (std::size_t i = 0; i < count; ++i) ++load.held[links[i]];
        },
        out);
    return out;
  };
  const StageRoute one = route_with_holds(whole), four = route_with_holds(parted);
  REQUIRE(one.bundles.size() == 1);
  REQUIRE(four.bundles.size() == 4);
  const double wire = ring_wire_bytes(CollKind::AllReduce, 8, kRouteBytes);
  std::set<std::vector<topo::LinkId>> routes;
  double bytes = 0;
  for (const auto& b : four.bundles) {
    CHECK(b.bytes == Approx(wire / 4));
    bytes += b.bytes;
    routes.emplace(four.links.begin() + b.begin, four.links.begin() + b.begin + b.count);
  }
  CHECK(bytes == Approx(wire));
  // Part 0 routes under the call's own keys on an idle network, as a whole flow does.
  CHECK(std::vector<topo::LinkId>(four.links.begin(), four.links.begin() + four.bundles[0].count) ==
        std::vector<topo::LinkId>(one.links.begin(), one.links.end()));
  // The later parts see it as load and take other keys: they do not all follow it.
  CHECK(routes.size() > 1);
  CHECK(four.latency_s >= one.latency_s);
  CHECK(four.rank0_wire_bytes == Approx(one.rank0_wire_bytes));
}
