#include "topologies/dragonfly.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>

using namespace exasim::topo;

namespace {

// 3 groups x 2 switches x 2 endpoints, 1 global link per pair; nodes of 2 GPUs and 2 NICs, so each
// group holds 2 nodes, GPU x sits on switch (x / 4) * 2 + x % 2, and the global links are
// sw0-sw2 (groups 0-1), sw1-sw4 (groups 0-2), sw3-sw5 (groups 1-2).
DragonflyParams tiny(RoutingPolicy routing) {
  DragonflyParams p;
  p.node = {2, 100e9, 1e-6, 2, 25e9, 2e-6};
  p.groups = 3;
  p.switches_per_group = 2;
  p.endpoints_per_switch = 2;
  p.global_links_per_group_pair = 1;
  p.local_bandwidth_Bps = 25e9;
  p.local_latency_s = 10e-9;
  p.global_bandwidth_Bps = 25e9;
  p.global_latency_s = 100e-9;
  p.switch_latency_s = 350e-9;
  p.routing = routing;
  return p;
}

DragonflyParams frontier() {
  DragonflyParams p;
  p.node = {8, 0, 1e-6, 4, 25e9, 1e-6};
  p.gpu_links = frontier_mi250x_gcd_matrix();
  p.groups = 74;
  p.switches_per_group = 32;
  p.endpoints_per_switch = 16;
  p.global_links_per_group_pair = 4;
  p.local_bandwidth_Bps = 25e9;
  p.global_bandwidth_Bps = 25e9;
  p.switch_latency_s = 350e-9;
  return p;
}

std::vector<LinkId> dragonfly_route(const Dragonfly& d, GpuId src, GpuId dst, std::uint64_t key = 0,
                                    const LinkLoadView* load = nullptr) {
  std::vector<LinkId> r;
  d.route(src, dst, key, load, r);
  return r;
}

std::uint32_t switch_hops(const Dragonfly& d, const std::vector<LinkId>& r) {
  std::uint32_t hops = 0;
  for (LinkId l : r) hops += d.links()[l].cls == LinkClass::Local || d.links()[l].cls == LinkClass::Global;
  return hops;
}

// A network route must be NIC-up, a chain of switch links from the sender's switch to the receiver's,
// NIC-down.
void check_walk(const Dragonfly& d, GpuId src, GpuId dst, const std::vector<LinkId>& r) {
  REQUIRE(r.size() >= 2);
  CHECK(d.links()[r.front()].cls == LinkClass::NicUp);
  CHECK(d.links()[r.back()].cls == LinkClass::NicDown);
  std::uint32_t at = d.switch_of_gpu(src);
  for (std::size_t i = 1; i + 1 < r.size(); ++i) {
    const auto [from, to] = d.switch_link_ends(r[i]);
    REQUIRE(from == at);
    at = to;
  }
  CHECK(at == d.switch_of_gpu(dst));
}

struct FakeLoad final : LinkLoadView {
  std::map<LinkId, double> flows;
  [[nodiscard]] double load(LinkId link) const override {
    auto it = flows.find(link);
    return it == flows.end() ? 0 : it->second;
  }
};

}  // namespace

TEST_CASE("dragonfly: tiny instance wiring", "[unit]") {
  Dragonfly d(tiny(RoutingPolicy::Minimal));
  CHECK(d.gpu_count() == 12);
  CHECK(d.node_count() == 6);
  CHECK(d.switch_count() == 6);
  CHECK(d.link_count(LinkClass::GpuGpu) == 6 * 2);
  CHECK(d.link_count(LinkClass::NicUp) == 12);
  CHECK(d.link_count(LinkClass::NicDown) == 12);
  CHECK(d.link_count(LinkClass::Local) == 6);
  CHECK(d.link_count(LinkClass::Global) == 6);
  CHECK(d.links().size() == 48);

  // Global ports round-robin: group 0 -> 1 on its switch 0, 0 -> 2 on switch 1; likewise for the others.
  CHECK(d.global_link_switch(0, 1, 0) == 0);
  CHECK(d.global_link_switch(0, 2, 0) == 1);
  CHECK(d.global_link_switch(1, 0, 0) == 2);
  CHECK(d.global_link_switch(1, 2, 0) == 3);
  CHECK(d.global_link_switch(2, 0, 0) == 4);
  CHECK(d.global_link_switch(2, 1, 0) == 5);
  CHECK(d.switch_link_ends(d.global_link(0, 2, 0)) == std::pair<std::uint32_t, std::uint32_t>{1, 4});
  CHECK(d.switch_link_ends(d.local_link(3, 2)) == std::pair<std::uint32_t, std::uint32_t>{3, 2});

  // A node's two NICs are on the two switches of its group.
  CHECK(d.switch_of_nic(0, 0) == 0);
  CHECK(d.switch_of_nic(0, 1) == 1);
  CHECK(d.switch_of_nic(3, 0) == 2);
  CHECK(d.switch_of_gpu(9) == 5);

  CHECK(d.longest_minimal_route_hops() == 3);
  CHECK(d.switch_graph_diameter() == 3);
  CHECK(d.max_global_ports_per_switch() == 1);
  CHECK(d.global_bisection_bandwidth_Bps() == Approx(2 * 25e9));  // 1 | 2 groups: 2 links cross
  CHECK(d.taper() == Approx(2 * 25e9 / (4 * 25e9)));
}

TEST_CASE("dragonfly: hand-checked routes on the tiny instance", "[unit]") {
  const Dragonfly minimal(tiny(RoutingPolicy::Minimal));
  const Dragonfly valiant(tiny(RoutingPolicy::Valiant));
  const Dragonfly adaptive(tiny(RoutingPolicy::Adaptive));
  const Dragonfly& d = minimal;  // same wiring in all three

  SECTION("inside a node: the GPU link, never the network") {
    for (const Dragonfly* t : {&minimal, &valiant, &adaptive}) {
      CHECK(dragonfly_route(*t, 0, 1) == std::vector<LinkId>{d.gpu_link(0, 0, 1)});
      CHECK(dragonfly_route(*t, 5, 4) == std::vector<LinkId>{d.gpu_link(2, 1, 0)});
    }
    CHECK(d.latency_s(dragonfly_route(d, 0, 1)) == Approx(1e-6));
  }

  SECTION("same switch: NIC up, NIC down") {
    for (const Dragonfly* t : {&minimal, &valiant, &adaptive}) {  // GPU 0 and 2: NIC 0 of nodes 0 and 1
      CHECK(dragonfly_route(*t, 0, 2) == std::vector<LinkId>{d.nic_link(0, 0, true), d.nic_link(1, 0, false)});
    }
    CHECK(d.latency_s(dragonfly_route(d, 0, 2)) == Approx(2e-6 + 350e-9 + 2e-6));
  }

  SECTION("same group, other switch: one local hop (Valiant has no third switch to detour through)") {
    const std::vector<LinkId> expected{d.nic_link(0, 0, true), d.local_link(0, 1), d.nic_link(1, 1, false)};
    for (const Dragonfly* t : {&minimal, &valiant, &adaptive}) CHECK(dragonfly_route(*t, 0, 3) == expected);
  }

  SECTION("minimal: local-global-local") {
    // GPU 0 (switch 0) -> GPU 9 (node 4, NIC 1, switch 5): the 0-2 link leaves from switch 1, lands on 4.
    const std::vector<LinkId> expected{d.nic_link(0, 0, true), d.local_link(0, 1), d.global_link(0, 2, 0),
                                       d.local_link(4, 5), d.nic_link(4, 1, false)};
    CHECK(dragonfly_route(minimal, 0, 9) == expected);
    CHECK(d.latency_s(expected) == Approx(2e-6 + 4 * 350e-9 + 2 * 10e-9 + 100e-9 + 2e-6));
    // GPU 0 -> GPU 8 (switch 4): no local hop at the far end.
    CHECK(dragonfly_route(minimal, 0, 8) == std::vector<LinkId>{d.nic_link(0, 0, true), d.local_link(0, 1),
                                                                d.global_link(0, 2, 0), d.nic_link(4, 0, false)});
    // GPU 1 (switch 1) -> GPU 8: the global link starts where the sender is.
    CHECK(dragonfly_route(minimal, 1, 8) ==
          std::vector<LinkId>{d.nic_link(0, 1, true), d.global_link(0, 2, 0), d.nic_link(4, 0, false)});
  }

  SECTION("valiant: through the only other group") {
    // GPU 0 -> GPU 9 via group 1: sw0 -global-> sw2 -local-> sw3 -global-> sw5.
    const std::vector<LinkId> expected{d.nic_link(0, 0, true), d.global_link(0, 1, 0), d.local_link(2, 3),
                                       d.global_link(1, 2, 0), d.nic_link(4, 1, false)};
    for (std::uint64_t key : {0ULL, 1ULL, 12345ULL}) CHECK(dragonfly_route(valiant, 0, 9, key) == expected);
    // GPU 1 (sw1) -> GPU 4 (node 2, sw2) via group 2: sw1 -global-> sw4 -local-> sw5 -global-> sw3 -local-> sw2.
    CHECK(dragonfly_route(valiant, 1, 4) == std::vector<LinkId>{d.nic_link(0, 1, true), d.global_link(0, 2, 0),
                                                                d.local_link(4, 5), d.global_link(2, 1, 0),
                                                                d.local_link(3, 2), d.nic_link(2, 0, false)});
  }

  SECTION("adaptive: minimal on an idle network, Valiant once the minimal global link is busy") {
    const std::vector<LinkId> min_route = dragonfly_route(minimal, 0, 9);
    const std::vector<LinkId> val_route = dragonfly_route(valiant, 0, 9);
    CHECK(dragonfly_route(adaptive, 0, 9) == min_route);  // no load view
    FakeLoad load;
    CHECK(dragonfly_route(adaptive, 0, 9, 0, &load) == min_route);  // idle: 3 hops each, tie goes to minimal
    load.flows[d.global_link(0, 2, 0)] = 1;                         // (1+1)*3 = 6 > 1*3 + bias 1
    CHECK(dragonfly_route(adaptive, 0, 9, 0, &load) == val_route);
    DragonflyParams biased = tiny(RoutingPolicy::Adaptive);
    biased.adaptive_bias = 3;  // 6 <= 3 + 3: the bias keeps it minimal
    CHECK(dragonfly_route(Dragonfly(biased), 0, 9, 0, &load) == min_route);
    load.flows[d.global_link(0, 2, 0)] = 3;  // 12 > 4
    CHECK(dragonfly_route(adaptive, 0, 9, 0, &load) == val_route);
    load.flows[d.global_link(1, 2, 0)] = 5;  // the detour is busier still
    CHECK(dragonfly_route(adaptive, 0, 9, 0, &load) == min_route);
  }

  SECTION("adaptive in parts: loads count parts, so a whole flow's worth of them tips the choice") {
    DragonflyParams in_parts = tiny(RoutingPolicy::Adaptive);
    in_parts.adaptive_parts = 4;
    const Dragonfly parted(in_parts);
    CHECK(parted.route_parts() == 4);
    CHECK(minimal.route_parts() == 1);
    CHECK(Dragonfly(tiny(RoutingPolicy::Valiant)).route_parts() == 1);  // parts only where routes adapt
    const std::vector<LinkId> min_route = dragonfly_route(minimal, 0, 9);
    const std::vector<LinkId> val_route = dragonfly_route(valiant, 0, 9);
    FakeLoad load;
    load.flows[d.global_link(0, 2, 0)] = 1;  // one part: (1 + 1/4) * 3 = 3.75 <= 3 + 1, minimal
    CHECK(dragonfly_route(parted, 0, 9, 0, &load) == min_route);
    CHECK(dragonfly_route(adaptive, 0, 9, 0, &load) == val_route);  // one whole flow: (1 + 1) * 3 = 6 > 4
    load.flows[d.global_link(0, 2, 0)] = 2;                         // (1 + 2/4) * 3 = 4.5 > 4
    CHECK(dragonfly_route(parted, 0, 9, 0, &load) == val_route);
  }
}

TEST_CASE("dragonfly adaptive: several candidates find the idle path that one candidate misses", "[unit]") {
  DragonflyParams p = tiny(RoutingPolicy::Adaptive);
  p.node = {4, 100e9, 1e-6, 2, 25e9, 1e-6};
  p.groups = 6;
  p.switches_per_group = 4;
  p.endpoints_per_switch = 3;
  p.global_links_per_group_pair = 3;
  DragonflyParams one = p, min_params = p, val_params = p;
  one.adaptive_candidates = 1;
  min_params.routing = RoutingPolicy::Minimal;
  val_params.routing = RoutingPolicy::Valiant;
  const Dragonfly several(p), single(one);
  const GpuId src = 0, dst = several.gpu_count() - 1;  // group 0 -> group 5
  const std::vector<LinkId> min_route = dragonfly_route(Dragonfly(min_params), src, dst);
  const std::vector<LinkId> val_route = dragonfly_route(Dragonfly(val_params), src, dst);
  REQUIRE(min_route != val_route);
  // Every switch-to-switch link of the minimal path and of the first Valiant candidate carries 3
  // flows (entries 1 .. size-2: the first and last are NIC links).
  FakeLoad load;
  for (const auto* r : {&min_route, &val_route})
    for (std::size_t i = 1; i + 1 < r->size(); ++i) load.flows[(*r)[i]] = 3;
  // One candidate of each kind: both busy, (1 + 3) * minimal hops <= (1 + 3) * Valiant hops + 1.
  CHECK(dragonfly_route(single, src, dst, 0, &load) == min_route);
  // Four of each: an idle one exists and wins.
  const std::vector<LinkId> chosen = dragonfly_route(several, src, dst, 0, &load);
  CHECK(chosen != min_route);
  CHECK(chosen != val_route);
  for (std::size_t i = 1; i + 1 < chosen.size(); ++i) CHECK(load.load(chosen[i]) == 0);
  // On an idle network every candidate costs its hops: the first minimal path, as with one candidate.
  CHECK(dragonfly_route(several, src, dst) == min_route);
}

TEST_CASE("dragonfly: every group pair has its global links, minimal routes stay within 3 hops", "[unit]") {
  DragonflyParams p = tiny(RoutingPolicy::Minimal);
  p.node = {4, 100e9, 1e-6, 2, 25e9, 1e-6};
  p.groups = 5;
  p.switches_per_group = 4;
  p.endpoints_per_switch = 3;
  p.global_links_per_group_pair = 3;
  for (RoutingPolicy policy : {RoutingPolicy::Minimal, RoutingPolicy::Valiant, RoutingPolicy::Adaptive}) {
    p.routing = policy;
    const Dragonfly d(p);
    CHECK(d.node_count() == 5 * 6);
    for (std::uint32_t g = 0; g < p.groups; ++g) {
      for (std::uint32_t h = 0; h < p.groups; ++h) CHECK(d.global_links_between(g, h) == (g == h ? 0u : 3u));
    }
    CHECK(d.max_global_ports_per_switch() == 3);  // 4 peers x 3 links over 4 switches
    CHECK(d.switch_graph_diameter() == 3);
    std::uint32_t longest = 0, longest_valiant = 0;
    for (GpuId src = 0; src < d.gpu_count(); ++src) {
      for (GpuId dst = 0; dst < d.gpu_count(); ++dst) {
        if (src == dst) continue;
        for (std::uint64_t key = 0; key < 3; ++key) {
          const auto r = dragonfly_route(d, src, dst, key);
          if (d.node_of(src) == d.node_of(dst)) {
            CHECK(r.size() == 1);
            continue;
          }
          check_walk(d, src, dst, r);
          const std::uint32_t hops = switch_hops(d, r);
          if (policy == RoutingPolicy::Valiant) {
            longest_valiant = std::max(longest_valiant, hops);
          } else {
            longest = std::max(longest, hops);
          }
        }
      }
    }
    if (policy == RoutingPolicy::Valiant) {
      CHECK(longest_valiant == 5);
    } else {
      CHECK(longest == d.longest_minimal_route_hops());
    }
  }
}

TEST_CASE("dragonfly: flow keys spread over parallel global links, deterministically", "[unit]") {
  DragonflyParams p = tiny(RoutingPolicy::Minimal);
  p.switches_per_group = 4;
  p.global_links_per_group_pair = 4;
  const Dragonfly d(p);
  const Dragonfly same(p);
  std::map<LinkId, int> used;
  for (std::uint64_t key = 0; key < 200; ++key) {
    const auto r = dragonfly_route(d, 0, d.gpu_count() - 1, key);
    CHECK(r == dragonfly_route(same, 0, d.gpu_count() - 1, key));
    for (LinkId l : r) used[l] += d.links()[l].cls == LinkClass::Global;
  }
  int globals = 0;
  for (auto [link, n] : used) globals += n > 0;
  CHECK(globals == 4);
  p.seed = 7;
  const Dragonfly reseeded(p);
  int differ = 0;
  for (std::uint64_t key = 0; key < 50; ++key)
    differ += dragonfly_route(d, 0, 20, key) != dragonfly_route(reseeded, 0, 20, key);
  CHECK(differ > 0);
}

TEST_CASE("dragonfly: a Frontier-sized instance has the expected counts", "[unit]") {
  const Dragonfly d(frontier());

  const std::size_t nodes = 74 * 128, switches = 74 * 32;
  CHECK(d.node_count() == nodes);
  CHECK(d.gpu_count() == nodes * 8);
  CHECK(d.switch_count() == switches);
  CHECK(d.link_count(LinkClass::GpuGpu) == nodes * 24);  // 12 linked GCD pairs, both directions
  CHECK(d.link_count(LinkClass::NicUp) == nodes * 4);
  CHECK(d.link_count(LinkClass::NicDown) == nodes * 4);
  CHECK(d.link_count(LinkClass::Local) == switches * 31);
  CHECK(d.link_count(LinkClass::Global) == 74 * 73 * 4);
  CHECK(d.links().size() == nodes * 32 + switches * 31 + 74 * 73 * 4);  // 398,120

  CHECK(d.max_global_ports_per_switch() == 10);  // 292 ports over 32 switches
  CHECK(d.longest_minimal_route_hops() == 3);
  CHECK(d.taper() == Approx(292.0 / 512.0));
  CHECK(d.global_bisection_bandwidth_Bps() == Approx(37.0 * 37 * 4 * 25e9));
  for (std::uint32_t g : {0u, 17u, 73u}) {
    for (std::uint32_t h = 0; h < 74; ++h) CHECK(d.global_links_between(g, h) == (g == h ? 0u : 4u));
  }
  // A node's 4 NICs are on 4 different switches of one chassis' set; 16 nodes share that set.
  CHECK(d.switch_of_nic(0, 0) == 0);
  CHECK(d.switch_of_nic(0, 3) == 3);
  CHECK(d.switch_of_nic(15, 3) == 3);
  CHECK(d.switch_of_nic(16, 0) == 4);
  CHECK(d.switch_of_nic(127, 3) == 31);
  CHECK(d.switch_of_nic(128, 0) == 32);

  std::uint64_t x = 1;
  for (int i = 0; i < 2000; ++i) {  // sampled pairs: minimal routes stay within 3 hops
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const GpuId src = static_cast<GpuId>((x >> 33) % d.gpu_count());
    const GpuId dst = static_cast<GpuId>((x >> 13) % d.gpu_count());
    if (d.node_of(src) == d.node_of(dst)) continue;
    const auto r = dragonfly_route(d, src, dst, x);
    check_walk(d, src, dst, r);
    CHECK(switch_hops(d, r) <= 3);
  }
}

TEST_CASE("dragonfly: Frontier GCD matrix routes unlinked pairs through a neighbour", "[unit]") {
  const GpuLinkMatrix m = frontier_mi250x_gcd_matrix();
  REQUIRE_NOTHROW(m.validate());
  int linked = 0;
  for (std::uint32_t a = 0; a < 8; ++a) {
    for (std::uint32_t b = 0; b < 8; ++b) linked += m.linked(a, b);
  }
  CHECK(linked == 24);
  CHECK(m.at(0, 1) == 200e9);
  CHECK(m.at(4, 2) == 100e9);
  CHECK(m.at(7, 3) == 50e9);
  // 0 -> 3: neighbours 1 (200, then 50) and 2 (50, then 200) tie at 50 GB/s; the lower number wins.
  CHECK(m.via(0, 3) == 1u);
  CHECK(m.via(0, 4) == 2u);  // via 2: 50 then 100; via 6: 100 then 50: tie again
  CHECK(m.via(0, 7) == 6u);  // the only common neighbour
  CHECK(!m.via(0, 1));

  DragonflyParams p = frontier();
  p.groups = 2;
  p.switches_per_group = 4;
  p.endpoints_per_switch = 2;
  const Dragonfly d(p);
  CHECK(dragonfly_route(d, 0, 3) == std::vector<LinkId>{d.gpu_link(0, 0, 1), d.gpu_link(0, 1, 3)});
  int unlinked = 0;
  for (std::uint32_t a = 0; a < 8; ++a) {
    for (std::uint32_t b = 0; b < 8; ++b) {
      if (a == b) continue;
      const auto r = dragonfly_route(d, 8 + a, 8 + b);  // node 1
      for (LinkId l : r) CHECK(d.links()[l].cls == LinkClass::GpuGpu);
      if (m.linked(a, b)) {
        CHECK(r == std::vector<LinkId>{d.gpu_link(1, a, b)});
        CHECK(d.links()[r[0]].bandwidth_Bps == m.at(a, b));
      } else {
        ++unlinked;
        REQUIRE(r.size() == 2);
        const std::uint32_t mid = *m.via(a, b);
        CHECK(r == std::vector<LinkId>{d.gpu_link(1, a, mid), d.gpu_link(1, mid, b)});
      }
    }
  }
  CHECK(unlinked == 32);  // 16 unordered pairs

  GpuLinkMatrix broken = m;
  broken.set_pair(0, 1, 0);
  broken.set_pair(0, 2, 0);
  broken.set_pair(0, 6, 0);  // GCD 0 isolated
  CHECK_THROWS_AS(broken.validate(), std::invalid_argument);
  p.gpu_links = broken;
  CHECK_THROWS_AS(Dragonfly(p), std::invalid_argument);
}

TEST_CASE("dragonfly: NVLink all-to-all helper and parameter checks", "[unit]") {
  const GpuLinkMatrix m = nvlink_all_to_all(4, 100e9);
  for (std::uint32_t a = 0; a < 4; ++a) {
    for (std::uint32_t b = 0; b < 4; ++b) CHECK(m.linked(a, b) == (a != b));
  }
  CHECK(m.at(2, 3) == 100e9);

  DragonflyParams p = tiny(RoutingPolicy::Minimal);
  p.nodes_per_group = 3;  // the NIC rule fits 2
  CHECK_THROWS_AS(Dragonfly(p), std::invalid_argument);
  p = tiny(RoutingPolicy::Minimal);
  p.node.nics = 3;  // more NICs than switches in a group
  p.node.gpus = 4;
  CHECK_THROWS_AS(Dragonfly(p), std::invalid_argument);
  // A link of no bandwidth is refused by name (a run would otherwise end as a deadlock).
  p = tiny(RoutingPolicy::Minimal);
  p.local_bandwidth_Bps = 0;
  CHECK_THROWS_WITH(Dragonfly(p), Catch::Contains("local_bandwidth_Bps must be > 0"));
  p = tiny(RoutingPolicy::Minimal);
  p.global_bandwidth_Bps = 0;
  CHECK_THROWS_WITH(Dragonfly(p), Catch::Contains("global_bandwidth_Bps must be > 0"));
  p = tiny(RoutingPolicy::Minimal);
  p.nodes_per_group = 1;  // partly populated groups (Alps-like)
  const Dragonfly d(p);
  CHECK(d.node_count() == 3);
  CHECK(d.injection_bandwidth_per_group_Bps() == Approx(2 * 25e9));
}
