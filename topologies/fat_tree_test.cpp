#include "topologies/fat_tree.hpp"

#include <catch2/catch.hpp>

#include <set>

#include "topologies/summary.hpp"
#include "topologies/test_support.hpp"

using namespace exasim::topo;
using testing::route;
using testing::route_error;

namespace {

// 2 leaves x 2 spines, 2 endpoints per leaf, nodes of 1 GPU and 1 NIC: GPUs 0-1 on leaf 0, 2-3 on leaf 1.
FatTreeParams tiny2(RoutingPolicy routing) {
  FatTreeParams p;
  p.node = {1, 0, 0, 1, 25e9, 1e-6};
  p.levels = 2;
  p.leaves_per_pod = 2;
  p.spines_per_pod = 2;
  p.endpoints_per_leaf = 2;
  p.leaf_spine_bandwidth_Bps = 25e9;
  p.switch_latency_s = 100e-9;
  p.routing = routing;
  return p;
}

// 2 pods x (2 leaves, 2 spines), 2 core planes of 2 cores; 2 endpoints per leaf: GPU x on leaf x / 2.
FatTreeParams tiny3(RoutingPolicy routing) {
  FatTreeParams p = tiny2(routing);
  p.levels = 3;
  p.pods = 2;
  p.cores_per_plane = 2;
  p.spine_core_bandwidth_Bps = 25e9;
  return p;
}

}  // namespace

TEST_CASE("fat tree: counts and tapers", "[unit]") {
  const FatTree two(tiny2(RoutingPolicy::Minimal));
  CHECK(two.node_count() == 4);
  CHECK(two.switch_count() == 4);
  CHECK(two.group_count() == 2);  // leaves
  CHECK(two.group_of_node(3) == 1);
  CHECK(two.links().size() == 4 * 2 + 4 + 4);
  CHECK(two.link_ends(two.leaf_up(1, 0, 0)) == LinkEnds{{VertexKind::Switch, 1}, {VertexKind::Switch, 2}});
  CHECK(two.link_ends(two.spine_down(0, 1, 0, 0)) == LinkEnds{{VertexKind::Switch, 3}, {VertexKind::Switch, 0}});
  CHECK(two.tapers() == std::vector<double>{1.0});
  CHECK(two.longest_minimal_route_hops() == 2);

  const FatTree three(tiny3(RoutingPolicy::Minimal));
  CHECK(three.node_count() == 8);
  CHECK(three.switch_count() == 4 + 4 + 4);
  CHECK(three.group_count() == 2);  // pods
  CHECK(three.group_of_node(5) == 1);
  const auto s = three.summary();
  CHECK(s.topology == "fat_tree");
  CHECK(s.links_per_class.at("up") == 8 + 8);
  CHECK(s.links_per_class.at("down") == 8 + 8);
  CHECK(s.max_minimal_switch_hops == 4);
  CHECK(s.taper == 1.0);
  CHECK(three.link_ends(three.spine_up(1, 1, 0, 0)) ==
        LinkEnds{{VertexKind::Switch, three.spine(1, 1)}, {VertexKind::Switch, three.core(1, 0)}});
  CHECK(three.link_ends(three.core_down(1, 1, 0, 0)) ==
        LinkEnds{{VertexKind::Switch, three.core(1, 1)}, {VertexKind::Switch, three.spine(0, 1)}});

  FatTreeParams tapered = tiny3(RoutingPolicy::Minimal);
  tapered.endpoints_per_leaf = 4;  // 4 NICs in, 2 spine links up: 2:1
  tapered.cores_per_plane = 1;     // 2 leaf links in, 1 core link up: 2:1
  const FatTree t(tapered);
  CHECK(t.tapers() == std::vector<double>{0.5, 0.5});
  CHECK(t.summary().taper == 0.5);
}

TEST_CASE("fat tree: hand-checked routes", "[unit]") {
  const FatTree two(tiny2(RoutingPolicy::Minimal));
  const auto up = [](const FatTree& t, std::uint32_t n) { return t.nic_link(n, 0, true); };
  const auto down = [](const FatTree& t, std::uint32_t n) { return t.nic_link(n, 0, false); };

  SECTION("same leaf: NIC up, NIC down") { CHECK(route(two, 0, 1) == std::vector<LinkId>{up(two, 0), down(two, 1)}); }

  SECTION("2 levels: leaf, spine, leaf; ECMP uses both spines") {
    std::set<std::uint32_t> spines;
    for (std::uint64_t key = 0; key < 32; ++key) {
      const auto r = route(two, 0, 3, key);
      REQUIRE(r.size() == 4);
      const std::uint32_t j = r[1] == two.leaf_up(0, 0, 0) ? 0 : 1;
      CHECK(r == std::vector<LinkId>{up(two, 0), two.leaf_up(0, j, 0), two.spine_down(0, j, 1, 0), down(two, 3)});
      spines.insert(j);
      CHECK(r == route(two, 0, 3, key));  // deterministic
    }
    CHECK(spines.size() == 2);
    CHECK(two.latency_s(route(two, 0, 3)) == Approx(2e-6 + 3 * 100e-9));
  }

  SECTION("3 levels: leaf, spine, core, spine, leaf") {
    const FatTree three(tiny3(RoutingPolicy::Minimal));
    for (std::uint64_t key = 0; key < 16; ++key) {
      const auto r = route(three, 0, 7, key);  // pod 0 leaf 0 -> pod 1 leaf 1
      REQUIRE(r.size() == 6);
      const auto spine_up = three.link_ends(r[2]);
      const std::uint32_t j = spine_up.from.index - three.spine(0, 0);
      const std::uint32_t c = spine_up.to.index - three.core(j, 0);
      CHECK(r == std::vector<LinkId>{up(three, 0), three.leaf_up(0, j, 0), three.spine_up(0, j, c, 0),
                                     three.core_down(j, c, 1, 0), three.spine_down(1, j, 1, 0), down(three, 7)});
      CHECK(route_error(three, 0, 7, r).empty());
    }
    // Inside a pod the route turns at the spine.
    CHECK(route(three, 0, 2).size() == 4);
  }

  SECTION("adaptive: least loaded up-link; minimal ignores load") {
    const FatTree adaptive(tiny3(RoutingPolicy::Adaptive));
    const FatTree minimal(tiny3(RoutingPolicy::Minimal));
    testing::FakeLoad load;
    CHECK(route(adaptive, 0, 7, 3, &load) == route(minimal, 0, 7, 3));  // idle: the ECMP choice
    for (std::uint64_t key = 0; key < 16; ++key) {
      const std::uint32_t j = adaptive.link_ends(route(minimal, 0, 7, key)[1]).to.index - adaptive.spine(0, 0);
      load.flows = {{adaptive.leaf_up(0, j, 0), 3}};  // the hashed spine is busy: take the other
      const auto r = route(adaptive, 0, 7, key, &load);
      CHECK(r[1] == adaptive.leaf_up(0, 1 - j, 0));
      CHECK(route(minimal, 0, 7, key, &load)[1] == adaptive.leaf_up(0, j, 0));
      // At the spine, the busier core is avoided too.
      load.flows[adaptive.spine_up(0, 1 - j, 0, 0)] = 2;
      load.flows[adaptive.spine_up(0, 1 - j, 1, 0)] = 1;
      CHECK(route(adaptive, 0, 7, key, &load)[2] == adaptive.spine_up(0, 1 - j, 1, 0));
    }
  }
}

TEST_CASE("fat tree: every route is a chain of existing links", "[unit]") {
  FatTreeParams p = tiny3(RoutingPolicy::Adaptive);
  p.node = {4, 100e9, 1e-6, 2, 25e9, 1e-6};
  p.pods = 3;
  p.leaves_per_pod = 3;
  p.spines_per_pod = 2;
  p.endpoints_per_leaf = 4;
  p.leaf_uplinks_per_spine = 2;
  p.spine_uplinks_per_core = 2;
  p.nodes = 15;  // partly populated: the last pod has 3 of 6 nodes
  const FatTree t(p);
  CHECK(t.group_count() == 3);
  testing::FakeLoad load;
  std::uint32_t bad = 0, longest = 0;
  for (GpuId src = 0; src < t.gpu_count(); ++src) {
    for (GpuId dst = 0; dst < t.gpu_count(); ++dst) {
      if (src == dst) continue;
      const auto r = route(t, src, dst, src ^ dst, &load);
      bad += !route_error(t, src, dst, r).empty();
      longest = std::max(longest, testing::switch_hops(t, r));
      for (LinkId l : r) load.flows[l] += 1;
    }
  }
  CHECK(bad == 0);
  CHECK(longest == 4);
}

namespace {

// Rail-optimised: 2 scalable units of 3 nodes (node n in SU n / 3), 4 rails, 3 spines.
FatTreeParams rails2() { return testing::nvswitch_rail_tree(3, 3); }

}  // namespace

TEST_CASE("fat tree, rail-optimised: NIC k of every node on rail k's leaf", "[unit]") {
  const FatTree t(rails2());
  CHECK(t.node_count() == 6);
  CHECK(t.leaf_count() == 8);
  CHECK(t.switch_count() == 8 + 3);
  CHECK(t.group_count() == 2);  // scalable units
  CHECK(t.group_of_node(2) == 0);
  CHECK(t.group_of_node(3) == 1);
  CHECK(t.leaf_of_nic(4, 2) == 6);
  CHECK(t.link_ends(t.nic_link(4, 2, true)) == LinkEnds{{VertexKind::Nic, 4 * 4 + 2}, {VertexKind::Switch, 6}});
  CHECK(t.link_ends(t.nic_link(0, 3, false)) == LinkEnds{{VertexKind::Switch, 3}, {VertexKind::Nic, 3}});
  CHECK(t.tapers() == std::vector<double>{1.0});  // 3 NICs in, 3 spine links up
  CHECK(t.longest_minimal_route_hops() == 2);
  CHECK_THAT(t.describe(), Catch::Contains("rail-optimised (4 rails)"));
  const auto s = t.summary();
  CHECK(s.max_minimal_switch_hops == 2);
  CHECK(s.taper == 1.0);
  CHECK(s.global_bisection_bandwidth_Bps == 4 * 3 * 25e9);  // 4 leaves' up-links, = half the injection
  CHECK(s.injection_bandwidth_Bps == 24 * 25e9);
}

TEST_CASE("fat tree, rail-optimised: same rail meets on its leaf, other rails go up to a spine", "[unit]") {
  const FatTree t(rails2());
  const auto nic = [&](std::uint32_t node, std::uint32_t k, bool up) { return t.nic_link(node, k, up); };
  // GPU 1 of node 0 to GPU 1 of node 1 (same SU, rail 1): NIC up, NIC down through leaf 1.
  CHECK(route(t, 1, 5) == std::vector<LinkId>{nic(0, 1, true), nic(1, 1, false)});
  CHECK(t.link_ends(nic(0, 1, true)).to == t.link_ends(nic(1, 1, false)).from);
  // GPU 1 of node 0 to GPU 2 of node 1 (same SU, rails 1 and 2): leaf 1, a spine, leaf 2.
  for (std::uint64_t key = 0; key < 8; ++key) {
    const auto r = route(t, 1, 6, key);
    REQUIRE(r.size() == 4);
    const std::uint32_t j = t.link_ends(r[1]).to.index - t.spine(0, 0);
    CHECK(r == std::vector<LinkId>{nic(0, 1, true), t.leaf_up(1, j, 0), t.spine_down(0, j, 2, 0), nic(1, 2, false)});
  }
  // Same rail, other SU: leaf 1 -> spine -> leaf 5.
  const auto other_su = route(t, 1, 13);  // node 3, GPU 1
  CHECK(testing::switch_hops(t, other_su) == 2);
  CHECK(t.link_ends(other_su[1]).from == Vertex{VertexKind::Switch, 1});
  CHECK(t.link_ends(other_su[2]).to == Vertex{VertexKind::Switch, 5});
  // Inside a node: the NVSwitch, no NIC.
  CHECK(route(t, 0, 3) == std::vector<LinkId>{0, 2 * 3 + 1});

  std::uint32_t bad = 0, longest = 0, same_rail_on_leaf = 0;
  for (GpuId src = 0; src < t.gpu_count(); ++src) {
    for (GpuId dst = 0; dst < t.gpu_count(); ++dst) {
      if (src == dst) continue;
      const auto r = route(t, src, dst, src * 31 + dst);
      bad += !route_error(t, src, dst, r).empty();
      const std::uint32_t hops = testing::switch_hops(t, r);
      longest = std::max(longest, hops);
      const bool same_su = src / 12 == dst / 12, same_rail = src % 4 == dst % 4, same_node = src / 4 == dst / 4;
      if (!same_node) {
        CHECK(hops == (same_su && same_rail ? 0u : 2u));
        same_rail_on_leaf += same_su && same_rail;
      }
    }
  }
  CHECK(bad == 0);
  CHECK(longest == 2);
  CHECK(same_rail_on_leaf == 2 * 4 * 3 * 2);  // 2 SUs x 4 rails x ordered pairs of 3 nodes

  // 3 levels: 2 pods of one SU each; across pods, same rail or not, 4 hops through a core.
  FatTreeParams p3 = rails2();
  p3.levels = 3;
  p3.pods = 2;
  p3.leaves_per_pod = 4;
  p3.cores_per_plane = 4;  // 4 leaf links in, 4 core links up
  p3.spine_core_bandwidth_Bps = 25e9;
  const FatTree three(p3);
  CHECK(three.group_count() == 2);
  CHECK(three.group_of_node(3) == 1);
  CHECK(testing::switch_hops(three, route(three, 1, 13)) == 4);
  CHECK(route_error(three, 1, 13, route(three, 1, 13)).empty());
  CHECK(testing::switch_hops(three, route(three, 1, 6)) == 2);
  CHECK(route(three, 1, 5).size() == 2);
  CHECK(three.tapers() == std::vector<double>{1.0, 1.0});
  CHECK(three.summary().max_minimal_switch_hops == 4);
}

TEST_CASE("fat tree, rail-optimised: bad shapes are refused", "[unit]") {
  FatTreeParams p = rails2();
  p.leaves_per_pod = 6;  // not whole sets of 4 rails
  CHECK_THROWS_WITH(FatTree(p), Catch::Contains("multiple of nics"));
  p = rails2();
  p.nodes = 7;
  CHECK_THROWS_WITH(FatTree(p), Catch::Contains("exceed the 6"));
  p = rails2();
  p.rail_optimized = false;  // 3 endpoints cannot hold a node's 4 NICs on one leaf
  CHECK_THROWS_WITH(FatTree(p), Catch::Contains("at least one node's NICs"));
}
