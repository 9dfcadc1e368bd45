#include "topologies/single_switch.hpp"

#include <catch2/catch.hpp>

using namespace exasim::topo;

TEST_CASE("single switch: routes inside and between nodes", "[unit]") {
  SingleSwitchParams p;
  p.node = {4, 100e9, 1e-6, 2, 25e9, 2e-6};
  p.nodes = 3;
  p.switch_latency_s = 0.5e-6;
  SingleSwitch topo(p);
  CHECK(topo.gpu_count() == 12);
  CHECK(topo.links().size() == 3 * (16 + 4));

  std::vector<LinkId> r;
  topo.route(1, 2, 0, nullptr, r);
  REQUIRE(r.size() == 1);
  CHECK(topo.links()[r[0]].cls == LinkClass::GpuGpu);
  CHECK(topo.latency_s(r) == Approx(1e-6));

  r.clear();
  topo.route(3, 4, 0, nullptr, r);  // node 0 GPU 3 (NIC 1) -> node 1 GPU 0 (NIC 0)
  REQUIRE(r.size() == 2);
  CHECK(topo.links()[r[0]].cls == LinkClass::NicUp);
  CHECK(topo.links()[r[1]].cls == LinkClass::NicDown);
  CHECK(r[0] == 16 + 2);        // node 0, NIC 1 up
  CHECK(r[1] == 20 + 16 + 1);   // node 1, NIC 0 down
  CHECK(topo.latency_s(r) == Approx(2e-6 + 0.5e-6 + 2e-6));
}
