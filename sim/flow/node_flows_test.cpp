#include "sim/flow/flow_network.hpp"
#include "sim/flow/internal/test_predictions.hpp"

#include <catch2/catch.hpp>

using namespace exasim;
using flow::FlowNetwork;
using flow::testing::Predictions;

namespace {
// Three nodes, each owning 4 GPU-GPU links of different speeds and a NIC's up and down links, then two
// switch links: the layout node_links.hpp gives every topology.
constexpr std::uint32_t kNodes = 3, kPerNode = 6;
std::vector<topo::Link> machine() {
  std::vector<topo::Link> links;
  for (std::uint32_t n = 0; n < kNodes; ++n) {
    for (double bw : {200e9, 100e9, 50e9, 50e9}) links.push_back({bw, 1e-6, topo::LinkClass::GpuGpu});
    links.push_back({25e9, 1e-6, topo::LinkClass::NicUp});
    links.push_back({25e9, 1e-6, topo::LinkClass::NicDown});
  }
  links.push_back({40e9, 1e-6, topo::LinkClass::Local});
  links.push_back({40e9, 1e-6, topo::LinkClass::Local});
  return links;
}
constexpr flow::NodeLayout kLayout{kNodes, kPerNode, 4};
}  // namespace

TEST_CASE("flows inside a node get the general solver's rates, bit for bit", "[unit]") {
  FlowNetwork local(machine(), flow::Solver::Components, kLayout);
  FlowNetwork general(machine(), flow::Solver::Components);
  REQUIRE(local.node_local());
  REQUIRE_FALSE(general.node_local());
  Predictions pl, pg;
  std::vector<std::pair<flow::FlowId, flow::FlowId>> live;  // (local id, general id)
  std::uint64_t seed = 12345;
  auto next = [&seed](std::uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  double now = 0;
  for (int step = 0; step < 400; ++step) {
    if (live.empty() || next(3) != 0) {
      // A ring-like route inside one node (links may repeat), or now and then a network route.
      std::vector<topo::LinkId> route;
      if (next(8) == 0) {
        const auto node = static_cast<topo::LinkId>(next(kNodes));
        route = {node * kPerNode + 4, kNodes * kPerNode + static_cast<topo::LinkId>(next(2)), node * kPerNode + 5};
      } else {
        const auto base = static_cast<topo::LinkId>(next(kNodes) * kPerNode);
        const auto hops = 1 + next(6);
        for (std::uint64_t h = 0; h < hops; ++h) route.push_back(base + static_cast<topo::LinkId>(next(4)));
      }
      const double bytes = 1e6 * static_cast<double>(1 + next(1000));
      live.emplace_back(local.add(route, bytes, step), general.add(route, bytes, step));
    } else {
      const auto i = next(live.size());
      CHECK(local.finish(live[i].first) == general.finish(live[i].second));
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    now += 1e-4;
    local.resolve(now, pl.scheduler());
    general.resolve(now, pg.scheduler());
    for (const auto& [l, g] : live) {
      REQUIRE(local.rate_Bps(l) == general.rate_Bps(g));  // exact: same arithmetic in the same order
      REQUIRE(pl.finish[l] == pg.finish[g]);
    }
    CHECK(local.active_flows() == general.active_flows());
  }
  // The general solver compares a new route with a few paths only, and may open a second path for the
  // same route (same rates either way); a node compares it with all of its own.
  CHECK(local.active_paths() <= general.active_paths());
}

TEST_CASE("node-local flows stay on the general solver where the layout does not allow them", "[unit]") {
  SECTION("no layout known") { CHECK_FALSE(FlowNetwork(machine(), flow::Solver::Local).node_local()); }
  SECTION("the reference solver handles every flow itself") {
    CHECK_FALSE(FlowNetwork(machine(), flow::Solver::Reference, kLayout).node_local());
  }
  SECTION("nodes laid out differently") {
    auto links = machine();
    links[kPerNode + 1].bandwidth_Bps = 1e9;  // node 1's second GPU link differs from node 0's
    CHECK_FALSE(FlowNetwork(links, flow::Solver::Local, kLayout).node_local());
  }
  SECTION("a GPU-GPU link outside the nodes' blocks") {
    auto links = machine();
    links.back().cls = topo::LinkClass::GpuGpu;
    CHECK_FALSE(FlowNetwork(links, flow::Solver::Local, kLayout).node_local());
  }
  SECTION("rings too long for a path record") {
    CHECK_FALSE(FlowNetwork(machine(), flow::Solver::Local, {kNodes, kPerNode, 64}).node_local());
  }
}

TEST_CASE("a route leaving a node through a GPU-GPU link is refused", "[unit]") {
  FlowNetwork net(machine(), flow::Solver::Local, kLayout);
  // GPU link of node 0, then its NIC: node-local flows assume no other flow crosses GPU links.
  CHECK_THROWS_AS(net.add({0, 4, kNodes * kPerNode, 5}, 1e9, 1), std::logic_error);
  // GPU links of two nodes.
  CHECK_THROWS_AS(net.add({0, kPerNode}, 1e9, 1), std::logic_error);
}
