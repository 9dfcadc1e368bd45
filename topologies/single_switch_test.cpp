#include "topologies/single_switch.hpp"

#include <catch2/catch.hpp>

#include "topologies/summary.hpp"
#include "topologies/test_support.hpp"

using namespace exasim::topo;
using exasim::topo::testing::route_error;

TEST_CASE("single switch: routes inside and between nodes", "[unit]") {
  SingleSwitchParams p;
  p.node = {4, 100e9, 1e-6, 2, 25e9, 2e-6};
  p.nodes = 3;
  p.switch_latency_s = 0.5e-6;
  SingleSwitch topo(p);
  CHECK(topo.gpu_count() == 12);
  CHECK(topo.node_count() == 3);
  CHECK(topo.links().size() == 3 * (12 + 4));  // 12 linked ordered GPU pairs, 2 NICs x up/down

  std::vector<LinkId> r;
  topo.route(1, 2, 0, nullptr, r);
  REQUIRE(r.size() == 1);
  CHECK(topo.links()[r[0]].cls == LinkClass::GpuGpu);
  CHECK(topo.latency_s(r) == Approx(1e-6));
  CHECK(topo.link_ends(r[0]) == LinkEnds{{VertexKind::Gpu, 1}, {VertexKind::Gpu, 2}});

  r.clear();
  topo.route(3, 4, 0, nullptr, r);  // node 0 GPU 3 (NIC 1) -> node 1 GPU 0 (NIC 0)
  REQUIRE(r.size() == 2);
  CHECK(topo.links()[r[0]].cls == LinkClass::NicUp);
  CHECK(topo.links()[r[1]].cls == LinkClass::NicDown);
  CHECK(r[0] == 12 + 2);       // node 0, NIC 1 up
  CHECK(r[1] == 16 + 12 + 1);  // node 1, NIC 0 down
  CHECK(topo.latency_s(r) == Approx(2e-6 + 0.5e-6 + 2e-6));
  CHECK(topo.link_ends(r[0]) == LinkEnds{{VertexKind::Nic, 1}, {VertexKind::Switch, 0}});
  CHECK(topo.link_ends(r[1]) == LinkEnds{{VertexKind::Switch, 0}, {VertexKind::Nic, 2}});
  for (GpuId a = 0; a < 12; ++a) {
    for (GpuId b = 0; b < 12; ++b) {
      if (a != b) CHECK(route_error(topo, a, b, testing::route(topo, a, b)).empty());
    }
  }

  const TopologySummary s = topo.summary();
  CHECK(s.topology == "single_switch");
  CHECK(s.nodes == 3);
  CHECK(s.nics == 6);
  CHECK(s.switches == 1);
  CHECK(s.groups == 1);
  CHECK(s.links_per_class.at("nic-up") == 6);
  CHECK(s.injection_bandwidth_Bps == Approx(6 * 25e9));
  CHECK(s.global_bisection_bandwidth_Bps == Approx(2 * 25e9));  // one node of three on each side
}

TEST_CASE("single switch: Frontier GCD matrix inside a node", "[unit]") {
  SingleSwitchParams p;
  p.node = {8, 0, 1e-6, 4, 25e9, 1e-6, GpuLinkLayout::FrontierMi250x};
  p.nodes = 2;
  const SingleSwitch topo(p);
  CHECK(topo.links().size() == 2 * (24 + 8));
  CHECK(testing::route(topo, 0, 3).size() == 2);  // unlinked pair: through GCD 1
  CHECK(topo.links()[testing::route(topo, 0, 1)[0]].bandwidth_Bps == 200e9);
  p.node.gpus = 4;  // the matrix is for 8 GCDs
  CHECK_THROWS_AS(SingleSwitch(p), std::invalid_argument);
}
