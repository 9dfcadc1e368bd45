// The 2D (Cascade/Aries-style) dragonfly: groups as rows x columns grids of switches.
#include "topologies/dragonfly.hpp"

#include <catch2/catch.hpp>

#include "topologies/summary.hpp"
#include "topologies/test_support.hpp"

using namespace exasim::topo;
using testing::route;
using testing::route_error;

namespace {

// 3 groups of 2 x 2 switches (s = row * 2 + column), one endpoint per switch, nodes of 1 GPU and 1 NIC:
// GPU x sits on switch x. Group g's global port to its r-th peer is on its switch r, so the global
// links are sw0-sw4 (groups 0-1), sw1-sw8 (groups 0-2), sw5-sw9 (groups 1-2).
DragonflyParams tiny2d(RoutingPolicy routing) {
  DragonflyParams p;
  p.node = {1, 0, 0, 1, 25e9, 1e-6};
  p.groups = 3;
  p.switches_per_group = 4;
  p.rows = 2;
  p.endpoints_per_switch = 1;
  p.global_links_per_group_pair = 1;
  p.local_bandwidth_Bps = 10e9;
  p.column_bandwidth_Bps = 30e9;
  p.global_bandwidth_Bps = 5e9;
  p.switch_latency_s = 100e-9;
  p.routing = routing;
  return p;
}

// 4 groups of 3 x 4 switches, two endpoints each, nodes of 2 GPUs and 2 NICs, 2 global links per
// group pair: large enough for every kind of route, small enough to route every pair.
DragonflyParams grid3x4() {
  DragonflyParams p = tiny2d(RoutingPolicy::Minimal);
  p.node = {2, 100e9, 1e-6, 2, 25e9, 1e-6};
  p.groups = 4;
  p.rows = 3;
  p.switches_per_group = 12;
  p.endpoints_per_switch = 2;
  p.global_links_per_group_pair = 2;
  return p;
}

}  // namespace

TEST_CASE("dragonfly2d: tiny instance counts", "[unit]") {
  const Dragonfly d(tiny2d(RoutingPolicy::Minimal));
  CHECK(d.two_dimensional());
  CHECK(d.columns() == 2);
  CHECK(d.node_count() == 12);
  CHECK(d.switch_count() == 12);
  CHECK(d.link_count(LinkClass::Local) == 12);        // each switch: 1 row peer
  CHECK(d.link_count(LinkClass::LocalColumn) == 12);  // and 1 column peer
  CHECK(d.link_count(LinkClass::Global) == 6);
  CHECK(d.links().size() == 24 + 24 + 6);
  CHECK(d.links()[d.local_link(0, 1)].bandwidth_Bps == 10e9);
  CHECK(d.links()[d.local_link(0, 2)].bandwidth_Bps == 30e9);
  CHECK_THROWS_AS(d.local_link(0, 3), std::invalid_argument);  // diagonal: no link
  DragonflyParams no_columns = tiny2d(RoutingPolicy::Minimal);
  no_columns.column_bandwidth_Bps = 0;  // a 2D group needs its column links
  CHECK_THROWS_WITH(Dragonfly(no_columns), Catch::Contains("column_bandwidth_Bps must be > 0"));
  CHECK(d.switch_link_ends(d.local_link(3, 1)) == std::pair<std::uint32_t, std::uint32_t>{3, 1});
  CHECK(d.switch_link_ends(d.global_link(0, 2, 0)) == std::pair<std::uint32_t, std::uint32_t>{1, 8});
  CHECK(d.longest_minimal_route_hops() == 5);
  CHECK(d.switch_graph_diameter() <= 5);
  CHECK(d.max_ports_used_per_switch() == 1 + 2 + 1);
  const TopologySummary s = d.summary();
  CHECK(s.topology == "dragonfly2d");
  CHECK(s.links_per_class.at("local-column") == 12);
  CHECK(s.max_minimal_switch_hops == 5);
}

TEST_CASE("dragonfly2d: hand-checked routes on the tiny instance", "[unit]") {
  const Dragonfly minimal(tiny2d(RoutingPolicy::Minimal));
  const Dragonfly valiant(tiny2d(RoutingPolicy::Valiant));
  const Dragonfly adaptive(tiny2d(RoutingPolicy::Adaptive));
  const Dragonfly& d = minimal;
  const auto up = [&](std::uint32_t n) { return d.nic_link(n, 0, true); };
  const auto down = [&](std::uint32_t n) { return d.nic_link(n, 0, false); };

  SECTION("inside a group: row first, then column") {
    CHECK(route(minimal, 0, 3) == std::vector<LinkId>{up(0), d.local_link(0, 1), d.local_link(1, 3), down(3)});
    CHECK(route(minimal, 2, 0) == std::vector<LinkId>{up(2), d.local_link(2, 0), down(0)});
    // Valiant detours through one of the two other switches of the group.
    const auto r = route(valiant, 0, 3);
    const std::vector<LinkId> via1{up(0), d.local_link(0, 1), d.local_link(1, 3), down(3)};
    const std::vector<LinkId> via2{up(0), d.local_link(0, 2), d.local_link(2, 3), down(3)};
    CHECK((r == via1 || r == via2));
  }

  SECTION("minimal between groups: row, column, global, row, column") {
    // GPU 2 (sw2, row 1 col 0) -> GPU 11 (sw11): group 0's link to group 2 leaves from sw1 (row 0,
    // col 1) and lands on sw8 (row 0, col 0).
    const std::vector<LinkId> expected{up(2),
                                       d.local_link(2, 3),
                                       d.local_link(3, 1),
                                       d.global_link(0, 2, 0),
                                       d.local_link(8, 9),
                                       d.local_link(9, 11),
                                       down(11)};
    CHECK(route(minimal, 2, 11) == expected);
    CHECK(d.latency_s(expected) == Approx(2e-6 + 6 * 100e-9));
    CHECK(route(minimal, 3, 11) == std::vector<LinkId>{up(3), d.local_link(3, 1), d.global_link(0, 2, 0),
                                                       d.local_link(8, 9), d.local_link(9, 11), down(11)});
  }

  SECTION("valiant between groups: through the only other group") {
    // sw2 -column-> sw0 -global-> sw4 -row-> sw5 -global-> sw9 -column-> sw11.
    const std::vector<LinkId> expected{up(2),
                                       d.local_link(2, 0),
                                       d.global_link(0, 1, 0),
                                       d.local_link(4, 5),
                                       d.global_link(1, 2, 0),
                                       d.local_link(9, 11),
                                       down(11)};
    for (std::uint64_t key : {0ULL, 5ULL, 99ULL}) CHECK(route(valiant, 2, 11, key) == expected);
  }

  SECTION("adaptive: minimal when idle, Valiant once the minimal global link is busy") {
    testing::FakeLoad load;
    CHECK(route(adaptive, 2, 11, 0, &load) == route(minimal, 2, 11));  // 5 hops each: tie
    load.flows[d.global_link(0, 2, 0)] = 1;                            // (1+1)*5 = 10 > 5 + 1
    CHECK(route(adaptive, 2, 11, 0, &load) == route(valiant, 2, 11));
    load.flows[d.local_link(4, 5)] = 2;  // the detour is busier: 15 > 10 + 1
    CHECK(route(adaptive, 2, 11, 0, &load) == route(minimal, 2, 11));
  }
}

TEST_CASE("dragonfly2d: every route is a chain of existing links within the hop bounds", "[unit]") {
  DragonflyParams p = grid3x4();
  for (RoutingPolicy policy : {RoutingPolicy::Minimal, RoutingPolicy::Valiant, RoutingPolicy::Adaptive}) {
    p.routing = policy;
    const Dragonfly d(p);
    CHECK(d.node_count() == 4 * 12);
    std::uint32_t longest = 0, bad = 0;
    for (GpuId src = 0; src < d.gpu_count(); ++src) {
      for (GpuId dst = 0; dst < d.gpu_count(); dst += 3) {
        if (src == dst) continue;
        const auto r = route(d, src, dst, src * 7 + dst);
        bad += !route_error(d, src, dst, r).empty();
        longest = std::max(longest, testing::switch_hops(d, r));
      }
    }
    CHECK(bad == 0);
    CHECK(longest == (policy == RoutingPolicy::Valiant ? 8u : 5u));
  }
}

TEST_CASE("dragonfly: route_with_latency() is route() and latency_s() of what it added", "[unit]") {
  // Row, column and global links of different latencies, so that a link latency taken from the wrong
  // kind shows; loads on some links, so that adaptive routing takes detours too.
  DragonflyParams p = grid3x4();
  p.node.nic_latency_s = 3e-6;
  p.local_latency_s = 7e-9;
  p.column_latency_s = 13e-9;
  p.global_latency_s = 101e-9;
  for (RoutingPolicy policy : {RoutingPolicy::Minimal, RoutingPolicy::Valiant, RoutingPolicy::Adaptive}) {
    p.routing = policy;
    const Dragonfly d(p);
    testing::FakeLoad load;
    for (LinkId l = d.first_load_read_link(); l < d.links().size(); l += 3) load.flows[l] = l % 5;
    std::uint32_t differ = 0, inside = 0;
    for (GpuId src = 0; src < d.gpu_count(); ++src) {
      for (GpuId dst = 0; dst < d.gpu_count(); dst += 5) {
        if (src == dst) continue;
        std::vector<LinkId> plain{42}, timed{42};  // something before: only what is appended counts
        d.route(src, dst, src * 11 + dst, &load, plain);
        const double latency = d.route_with_latency(src, dst, src * 11 + dst, &load, timed);
        differ += plain != timed || latency != d.latency_s(timed.data() + 1, timed.size() - 1);
        inside += d.node_of(src) == d.node_of(dst);
      }
    }
    CHECK(differ == 0);
    CHECK(inside > 0);
  }
}
