// Nodes whose GPUs hang off an NVSwitch fabric (gpu_links = nvswitch, node.hpp): the JSON, the link
// layout and routes, the export, and what the fast core makes of them: a GPU talking to several peers
// shares its one link to the fabric, which the per-pair all_to_all layout cannot express.

#include <catch2/catch.hpp>

#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/flow/flow_network.hpp"
#include "topologies/single_switch.hpp"
#include "topologies/summary.hpp"
#include "topologies/test_support.hpp"

using namespace exasim;
using namespace exasim::topo;
using exasim::topo::testing::route;
using exasim::topo::testing::route_error;

namespace {

const char* kDgxA100Node = R"({"gpus": 8, "gpu_links": "nvswitch", "gpu_switch_bandwidth_Bps": 300e9,
    "gpu_gpu_latency_s": 1e-6, "nics": 8, "nic_bandwidth_Bps": 25e9, "nic_latency_s": 5e-7})";

NodeSpec node_from(const nlohmann::json& j) { return load_node_spec(JsonView(j, "dgx.json", "node")); }

std::string error_of(const nlohmann::json& j) {
  try {
    (void)node_from(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

SingleSwitch machine(const NodeSpec& node, std::uint32_t nodes) {
  SingleSwitchParams p;
  p.node = node;
  p.nodes = nodes;
  p.switch_latency_s = 1e-7;
  return SingleSwitch(p);
}

flow::NodeLayout layout_of(const Topology& t) { return {t.node_count(), t.links_per_node(), t.gpus_per_node()}; }

/// Rates of flows from GPU `src` to each of `dsts` (each alone on its own route), solved by `net`.
std::vector<double> fan_out_rates(const Topology& t, flow::FlowNetwork& net, GpuId src,
                                  const std::vector<GpuId>& dsts) {
  std::vector<flow::FlowId> ids;
  for (GpuId d : dsts) ids.push_back(net.add(route(t, src, d), 1e9, d));
  net.resolve(0, [](double, flow::FlowId) {});
  std::vector<double> rates;
  for (auto id : ids) rates.push_back(net.rate_Bps(id));
  return rates;
}

}  // namespace

TEST_CASE("nvswitch: the node JSON and its errors", "[unit]") {
  const auto j = nlohmann::json::parse(kDgxA100Node);
  const NodeSpec n = node_from(j);
  CHECK(n.gpu_links == GpuLinkLayout::NvSwitch);
  CHECK(n.gpu_switch_bandwidth_Bps == 300e9);
  CHECK(n.gpu_gpu_bandwidth_Bps == 0);
  CHECK(to_string(n.gpu_links) == "nvswitch");
  CHECK(gpu_link_matrix(n).gpus == 0);  // no direct GPU pairs

  auto bad = j;
  bad["gpu_gpu_bandwidth_Bps"] = 300e9;
  CHECK_THAT(error_of(bad),
             Catch::Contains("dgx.json: node.gpu_gpu_bandwidth_Bps") && Catch::Contains("gpu_switch_bandwidth_Bps"));
  bad = j;
  bad.erase("gpu_switch_bandwidth_Bps");
  CHECK_THAT(error_of(bad), Catch::Contains("node.gpu_switch_bandwidth_Bps: missing required field"));
  bad = j;
  bad["gpu_links"] = "all_to_all";
  bad["gpu_gpu_bandwidth_Bps"] = 100e9;
  CHECK_THAT(error_of(bad), Catch::Contains("node.gpu_switch_bandwidth_Bps: only used with gpu_links = nvswitch"));
  bad["gpu_links"] = "nvlink";
  CHECK_THAT(error_of(bad), Catch::Contains("node.gpu_links") && Catch::Contains("nvswitch") &&
                                Catch::Contains("all_to_all") && Catch::Contains("frontier_mi250x"));
}

TEST_CASE("nvswitch: each GPU has an up and a down link, and routes go up then down", "[unit]") {
  const NodeSpec n = node_from(nlohmann::json::parse(kDgxA100Node));
  const SingleSwitch t = machine(n, 2);
  const NodeLinks& nl = t.node_links();
  CHECK(nl.switched());
  CHECK(t.links_per_node() == 2 * 8 + 2 * 8);
  CHECK(t.node_switch_count() == 2);
  CHECK(t.switch_count() == 1);  // the fabric is not a network switch
  CHECK(t.links()[nl.switch_link(1, 3, true)].bandwidth_Bps == 300e9);
  CHECK(t.links()[nl.switch_link(1, 3, true)].cls == LinkClass::GpuGpu);
  CHECK(t.link_ends(nl.switch_link(1, 3, true)) == LinkEnds{{VertexKind::Gpu, 11}, {VertexKind::NodeSwitch, 1}});
  CHECK(t.link_ends(nl.switch_link(1, 3, false)) == LinkEnds{{VertexKind::NodeSwitch, 1}, {VertexKind::Gpu, 11}});
  CHECK(route(t, 8, 11) == std::vector<LinkId>{nl.switch_link(1, 0, true), nl.switch_link(1, 3, false)});
  CHECK(t.latency_s(route(t, 8, 11)) == 1e-6);  // two halves of gpu_gpu_latency_s
  for (GpuId a = 0; a < 16; ++a) {
    for (GpuId b = 0; b < 16; ++b) {
      if (a == b) continue;
      INFO(a << " -> " << b);
      CHECK(route_error(t, a, b, route(t, a, b)).empty());
    }
  }
  // Between nodes the NVSwitch is not crossed: NIC up, NIC down.
  CHECK(route(t, 3, 12) == std::vector<LinkId>{nl.nic_link(0, 3, true), nl.nic_link(1, 4, false)});
  CHECK_THROWS_AS(nl.gpu_link(0, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(NodeLinks(n, nvlink_all_to_all(8, 1e9)), std::invalid_argument);
  CHECK(t.summary().links_per_class.at("gpu-gpu") == 2 * 16);

  std::ostringstream json;
  export_topology(t, "json", json);
  CHECK_THAT(json.str(), Catch::Contains(R"({"id":"nvs1","kind":"nvswitch","node":1,"group":0})") &&
                             Catch::Contains(R"("from":"gpu11","to":"nvs1","class":"gpu-gpu","bandwidth_Bps":3e+11)"));
  std::ostringstream graphml;
  export_topology(t, "graphml", graphml);
  CHECK_THAT(graphml.str(), Catch::Contains("nvs1"));
}

TEST_CASE("nvswitch: a GPU sending to 7 peers at once gets 1/7 of its link each, all_to_all does not share", "[unit]") {
  const NodeSpec nv = node_from(nlohmann::json::parse(kDgxA100Node));
  const SingleSwitch t = machine(nv, 2);
  const std::vector<GpuId> peers{9, 10, 11, 12, 13, 14, 15};  // node 1, from GPU 8
  flow::FlowNetwork fast(t.links(), flow::Solver::Local, layout_of(t));
  REQUIRE(fast.node_local());  // the node-local solver takes the NVSwitch links
  flow::FlowNetwork reference(t.links(), flow::Solver::Reference);
  REQUIRE_FALSE(reference.node_local());
  const auto rates = fan_out_rates(t, fast, 8, peers);
  const auto expected = fan_out_rates(t, reference, 8, peers);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    CHECK(rates[i] == 300e9 / 7);
    CHECK(rates[i] == expected[i]);  // bit for bit
  }
  // The receiving side shares too: 7 GPUs into GPU 0 share its down link.
  flow::FlowNetwork in(t.links(), flow::Solver::Local, layout_of(t));
  std::vector<flow::FlowId> ids;
  for (GpuId s = 1; s < 8; ++s) ids.push_back(in.add(route(t, s, 0), 1e9, s));
  in.resolve(0, [](double, flow::FlowId) {});
  for (auto id : ids) CHECK(in.rate_Bps(id) == 300e9 / 7);

  // all_to_all: every pair has its own link, so the same fan-out runs at the full pair rate.
  NodeSpec pairs = nv;
  pairs.gpu_links = GpuLinkLayout::AllToAll;
  pairs.gpu_gpu_bandwidth_Bps = 100e9;  // each pair's own link, more than 300/7 GB/s
  pairs.gpu_switch_bandwidth_Bps = 0;
  const SingleSwitch a2a = machine(pairs, 2);
  flow::FlowNetwork direct(a2a.links(), flow::Solver::Local, layout_of(a2a));
  REQUIRE(direct.node_local());
  for (double r : fan_out_rates(a2a, direct, 8, peers)) CHECK(r == 100e9);

  // A ring over the 8 GPUs crosses each up and each down link once: the full 300 GB/s.
  flow::FlowNetwork ring(t.links(), flow::Solver::Local, layout_of(t));
  std::vector<LinkId> bundle;
  for (GpuId g = 0; g < 8; ++g) t.route(g, (g + 1) % 8, 0, nullptr, bundle);
  const auto id = ring.add(bundle, 1e9, 0);
  ring.resolve(0, [](double, flow::FlowId) {});
  CHECK(ring.rate_Bps(id) == 300e9);
}

TEST_CASE("nvswitch: nodes too large for the node-local solver fall back to the general one", "[unit]") {
  // 20 GPUs: a ring inside the node has 40 links, more than a node-local path holds (kMaxHops).
  NodeSpec big = node_from(nlohmann::json::parse(kDgxA100Node));
  big.gpus = 20;
  const SingleSwitch t = machine(big, 2);
  flow::FlowNetwork net(t.links(), flow::Solver::Local, layout_of(t));
  CHECK_FALSE(net.node_local());
  std::vector<GpuId> peers;
  for (GpuId g = 21; g < 40; ++g) peers.push_back(g);
  for (double r : fan_out_rates(t, net, 20, peers)) CHECK(r == 300e9 / 19);
}

TEST_CASE("nvswitch: an NVL72 rack is one node of 72 GPUs, its pairs over NVLink, racks over the NICs", "[unit]") {
  // gb200-nvl72's node: the NVLink domain is the node (node.hpp), up to 72 GPUs.
  auto j = nlohmann::json::parse(kDgxA100Node);
  j["gpus"] = 72;
  j["nics"] = 72;
  j["gpu_switch_bandwidth_Bps"] = 900e9;
  const NodeSpec n = node_from(j);
  const SingleSwitch t = machine(n, 2);
  const NodeLinks& nl = t.node_links();
  // GPU 0 to GPU 71 (different compute trays of one rack): up to the NVLink fabric and down, no NIC.
  CHECK(route(t, 0, 71) == std::vector<LinkId>{nl.switch_link(0, 0, true), nl.switch_link(0, 71, false)});
  CHECK(t.links()[nl.switch_link(0, 71, false)].bandwidth_Bps == 900e9);
  // GPU 71 to GPU 72 (the next rack): its own NIC up, the other's down.
  CHECK(route(t, 71, 72) == std::vector<LinkId>{nl.nic_link(0, 71, true), nl.nic_link(1, 0, false)});
  // A 72-GPU ring inside the rack runs at the full NVLink rate (the general solver: too long a path
  // for the node-local one).
  flow::FlowNetwork net(t.links(), flow::Solver::Local, layout_of(t));
  CHECK_FALSE(net.node_local());
  std::vector<LinkId> bundle;
  for (GpuId g = 0; g < 72; ++g) t.route(g, (g + 1) % 72, 0, nullptr, bundle);
  const auto id = net.add(bundle, 1e9, 0);
  net.resolve(0, [](double, flow::FlowId) {});
  CHECK(net.rate_Bps(id) == 900e9);
  // 72 is the most a node takes.
  j["gpus"] = 73;
  CHECK_THAT(error_of(j), Catch::Contains("node.gpus: must be an integer in [1, 72]"));
}
