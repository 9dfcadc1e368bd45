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

  SECTION("same leaf: NIC up, NIC down") {
    CHECK(route(two, 0, 1) == std::vector<LinkId>{up(two, 0), down(two, 1)});
  }

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
