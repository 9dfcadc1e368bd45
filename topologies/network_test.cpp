#include "topologies/network.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <random>

#include "sim/core/error.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/summary.hpp"
#include "topologies/test_support.hpp"

using namespace exasim::topo;
using exasim::InputError;
using exasim::JsonView;
using exasim::topo::testing::Json;
using exasim::topo::testing::route_error;

namespace {

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024;  // Linux reports kilobytes
}

NodeSpec frontier_node() {
  const nlohmann::json j = nlohmann::json::parse(R"({"gpus": 8, "gpu_links": "frontier_mi250x",
      "gpu_gpu_latency_s": 1e-6, "nics": 4, "nic_bandwidth_Bps": 25e9, "nic_latency_s": 1e-6})");
  return load_node_spec(JsonView(j, "test.json", "node"));
}

NodeSpec small_node(std::uint32_t gpus = 4, std::uint32_t nics = 2) { return {gpus, 100e9, 1e-6, nics, 25e9, 1e-6}; }

// Frontier's dragonfly as a machine file would give it (docs/sources.md 2.1, 2.4):
// 74 groups x 32 Rosetta switches, 16 NICs per switch, 128 nodes per group, 4 global links per group
// pair, 25 GB/s per direction on every link, ~350 ns per switch.
const char* kFrontierNetwork = R"({
  "topology": "dragonfly", "groups": 74, "switches_per_group": 32, "endpoints_per_switch": 16,
  "nodes_per_group": 128, "global_links_per_group_pair": 4, "ports_per_switch": 64,
  "local_bandwidth_Bps": 25e9, "local_latency_s": 1e-8, "global_bandwidth_Bps": 25e9, "global_latency_s": 1e-7,
  "switch_latency_s": 3.5e-7, "routing": "minimal", "sources": {"groups": "docs/sources.md 2.1 [F3]"}
})";

std::string frontier_with(const std::string& key, const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(kFrontierNetwork);
  if (value.empty()) {
    j.erase(key);
  } else {
    j[key] = nlohmann::json::parse(value);
  }
  return j.dump();
}

/// The InputError `build` throws; fails the test when it throws nothing.
template <class F>
InputError input_error(F build) {
  try {
    build();
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("node: gpu_links chooses the GPU link matrix", "[unit]") {
  const NodeSpec frontier = frontier_node();
  CHECK(frontier.gpu_links == GpuLinkLayout::FrontierMi250x);
  CHECK(gpu_link_matrix(frontier).at(0, 1) == 200e9);
  CHECK(!gpu_link_matrix(frontier).linked(0, 3));

  const nlohmann::json nv = nlohmann::json::parse(R"({"gpus": 4, "gpu_gpu_bandwidth_Bps": 1e11,
      "gpu_gpu_latency_s": 1e-6, "nics": 4, "nic_bandwidth_Bps": 25e9, "nic_latency_s": 1e-6})");
  const NodeSpec a100 = load_node_spec(JsonView(nv, "m.json", "node"));
  CHECK(a100.gpu_links == GpuLinkLayout::AllToAll);
  CHECK(gpu_link_matrix(a100).at(2, 3) == 1e11);

  auto bad = nv;
  bad["gpu_links"] = "frontier_mi250x";  // 4 GPUs
  auto e = input_error([&] { (void)load_node_spec(JsonView(bad, "m.json", "node")); });
  CHECK(e.field() == "node.gpu_links");
  bad["gpu_links"] = "torus";
  e = input_error([&] { (void)load_node_spec(JsonView(bad, "m.json", "node")); });
  CHECK(e.field() == "node.gpu_links");
  CHECK(std::string(e.what()).find("all_to_all") != std::string::npos);
  bad = nv;
  bad["gpu_link"] = "all_to_all";  // typo
  e = input_error([&] { (void)load_node_spec(JsonView(bad, "m.json", "node")); });
  CHECK(e.field() == "node.gpu_link");
}

TEST_CASE("network: Frontier-sized dragonfly from JSON: counts, links per pair, routes", "[integration]") {
  const Json net(kFrontierNetwork);
  // How long building takes is scale_bench's prepare_s, not a limit here (no wall clock in tests).
  const auto topo = build_network(frontier_node(), net.view(), {.nodes_needed = 9000, .seed = 1});

  const auto* d = dynamic_cast<const Dragonfly*>(topo.get());
  REQUIRE(d != nullptr);
  const std::uint32_t nodes = 74 * 128, switches = 74 * 32;
  CHECK(topo->node_count() == nodes);
  CHECK(topo->gpu_count() == 75'776);
  CHECK(topo->switch_count() == switches);
  CHECK(topo->group_count() == 74);
  CHECK(topo->group_of_node(128) == 1);
  CHECK(topo->group_of_node(nodes - 1) == 73);

  const TopologySummary s = topo->summary();
  CHECK(s.topology == "dragonfly");
  CHECK(s.nics == nodes * 4);
  CHECK(s.links_per_class.at("gpu-gpu") == std::uint64_t{nodes} * 24);  // 12 linked GCD pairs
  CHECK(s.links_per_class.at("nic-up") == std::uint64_t{nodes} * 4);
  CHECK(s.links_per_class.at("local") == std::uint64_t{switches} * 31);
  CHECK(s.links_per_class.at("global") == 74u * 73 * 4);
  CHECK(s.global_links_per_group_pair == 4);
  CHECK(s.max_minimal_switch_hops == 3);
  CHECK(s.taper == Approx(73.0 * 4 / 512));  // blocking factor 1.75 (docs/sources.md 2.1)
  CHECK(s.injection_bandwidth_Bps == Approx(nodes * 4 * 25e9));
  CHECK(s.global_bisection_bandwidth_Bps == Approx(37.0 * 37 * 4 * 25e9));
  CHECK(to_json(s)["links_per_class"]["global"] == 74 * 73 * 4);
  for (std::uint32_t g : {0u, 40u, 73u}) {
    for (std::uint32_t h = 0; h < 74; ++h) CHECK(d->global_links_between(g, h) == (g == h ? 0u : 4u));
  }

  std::mt19937_64 rng(42);
  std::uint32_t longest = 0, bad = 0;
  std::string first_error;
  for (int i = 0; i < 20'000; ++i) {
    const GpuId src = static_cast<GpuId>(rng() % topo->gpu_count());
    const GpuId dst = static_cast<GpuId>(rng() % topo->gpu_count());
    if (src == dst) continue;
    const auto r = testing::route(*topo, src, dst, rng());
    const std::string err = route_error(*topo, src, dst, r);
    if (!err.empty() && bad++ == 0) first_error = err;
    longest = std::max(longest, testing::switch_hops(*topo, r));
  }
  INFO(first_error);
  CHECK(bad == 0);
  CHECK(longest == 3);
}

TEST_CASE("network: routing 1,000,000 random GPU pairs on Frontier stays lazy", "[integration]") {
  const Json net(frontier_with("routing", "\"adaptive\""));
  const auto topo = build_network(frontier_node(), net.view(), {});
  testing::FakeLoad idle;
  std::mt19937_64 rng(7);
  std::vector<LinkId> r;
  std::uint64_t links_walked = 0, out_of_range = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    const GpuId src = static_cast<GpuId>(rng() % topo->gpu_count());
    GpuId dst = static_cast<GpuId>(rng() % topo->gpu_count());
    if (dst == src) dst = (dst + 1) % topo->gpu_count();
    r.clear();
    topo->route(src, dst, static_cast<std::uint64_t>(i), &idle, r);
    links_walked += r.size();
    for (LinkId l : r) out_of_range += l >= topo->links().size();
  }
  // Lazy: no table per GPU pair (memory, not time, is checked: tests hold no wall-clock limits).
  const double rss = peak_rss_bytes();
  INFO("1M Frontier routes (adaptive, idle load view): " << links_walked << " links; peak RSS " << rss / (1 << 20)
                                                         << " MiB");
  CHECK(out_of_range == 0);
  CHECK(links_walked > 1'900'000);  // nearly every pair spans two nodes: a NIC up and one down at least
  CHECK(rss < double(1 << 30));
}

TEST_CASE("network: single switch is sized to the job", "[unit]") {
  const NodeSpec node = small_node();
  const Json unbounded(R"({"topology": "single_switch", "switch_latency_s": 3.5e-7})");
  CHECK(build_network(node, unbounded.view(), {.nodes_needed = 5})->node_count() == 5);
  CHECK(build_network(node, unbounded.view(), {})->node_count() == 1);
  const Json bounded(R"({"topology": "single_switch", "max_nodes": 4})");
  CHECK(build_network(node, bounded.view(), {})->node_count() == 4);
  CHECK(build_network(node, bounded.view(), {.nodes_needed = 3})->node_count() == 3);
  const auto e = input_error([&] { (void)build_network(node, bounded.view(), {.nodes_needed = 5}); });
  CHECK(e.field() == "network.max_nodes");
  CHECK(std::string(e.what()).find("the job needs 5 nodes, the machine has 4") != std::string::npos);
}

TEST_CASE("network: every bad field is an InputError naming it", "[unit]") {
  const NodeSpec node = frontier_node();
  const auto error_for = [&](const std::string& text, const NetworkOptions& o = {}) {
    const Json j(text);
    return input_error([&] { (void)build_network(node, j.view(), o); });
  };
  const auto expect = [&](const std::string& text, const std::string& field, const std::string& words,
                          const NetworkOptions& o = {}) {
    const InputError e = error_for(text, o);
    INFO(e.what());
    CHECK(e.source() == "test.json");
    CHECK(e.field() == field);
    CHECK(std::string(e.what()).find(words) != std::string::npos);
  };

  expect(frontier_with("groups", "0"), "network.groups", "[1,");
  expect(frontier_with("groups", "-3"), "network.groups", "integer");
  expect(frontier_with("groups", "\"many\""), "network.groups", "integer");
  expect(frontier_with("groups", ""), "network.groups", "missing");
  expect(frontier_with("global_links_per_group_pair", "8"), "network.global_links_per_group_pair",
         "global links do not fit");
  expect(frontier_with("endpoints_per_switch", "40"), "network.endpoints_per_switch", "endpoints do not fit");
  expect(frontier_with("nodes_per_group", "129"), "network.nodes_per_group", "at most 128 nodes fit a group");
  expect(frontier_with("switches_per_group", "2"), "network.switches_per_group", "4 NICs");
  expect(frontier_with("routing", "\"shortest\""), "network.routing", "minimal, valiant, adaptive");
  expect(frontier_with("adaptive_bias", "-1"), "network.adaptive_bias", "number");
  expect(frontier_with("adaptive_candidates", "0"), "network.adaptive_candidates", "[1, 16]");
  expect(frontier_with("adaptive_candidates", "17"), "network.adaptive_candidates", "[1, 16]");
  expect(frontier_with("adaptive_parts", "0"), "network.adaptive_parts", "[1, 16]");
  expect(frontier_with("adaptive_parts", "17"), "network.adaptive_parts", "[1, 16]");
  expect(frontier_with("adaptive_parts", "2.5"), "network.adaptive_parts", "integer");
  expect(frontier_with("local_bandwidth_Bps", "0"), "network.local_bandwidth_Bps", "[1000,");
  // Below 1 kB/s a link is a unit slip (docs/reliability.md).
  expect(frontier_with("global_bandwidth_Bps", "999"), "network.global_bandwidth_Bps", "[1000, 1e+15] (got 999)");
  expect(frontier_with("global_latency_s", "\"fast\""), "network.global_latency_s", "number");
  expect(frontier_with("switches", "32"), "network.switches", "unknown field");
  expect(kFrontierNetwork, "network.groups", "the job needs 10000 nodes, the machine has 9472",
         {.nodes_needed = 10000});
  expect(R"({"topology": "torus"})", "network.topology", "single_switch, dragonfly, dragonfly2d, fat_tree");
  expect(R"({"groups": 3})", "network.topology", "missing");
  expect(R"({"topology": "single_switch", "routing": "adaptive"})", "network.routing", "minimal");
  expect(R"({"topology": "single_switch", "groups": 2})", "network.groups", "unknown field");
  // Machines too large to build in bounded memory (docs/reliability.md): 2^24 frontier nodes of 8 GPUs
  // ran out of memory; 2^20 GPUs, 2^20 switches and 2^25 links are the limits.
  expect(R"({"topology": "single_switch", "max_nodes": 16777216})", "network.max_nodes",
         "the machine would have 134217728 GPUs, more than the 1048576 exasim builds in bounded memory");
  // One node past 2^20 / 8 = 131072 nodes (building the allowed 2^20 GPUs would take seconds here).
  expect(R"({"topology": "single_switch", "max_nodes": 131073})", "network.max_nodes", "1048584 GPUs, more than");
  expect(R"({"topology": "dragonfly", "groups": 4096, "switches_per_group": 512, "endpoints_per_switch": 1,
      "global_links_per_group_pair": 1, "nodes_per_group": 1, "ports_per_switch": 65535,
      "local_bandwidth_Bps": 1e10, "local_latency_s": 1e-7, "global_bandwidth_Bps": 1e10, "global_latency_s": 1e-6})",
         "network.groups", "the machine would have 2097152 switches, more than the 1048576");

  // dragonfly2d
  const std::string cascade = R"({"topology": "dragonfly2d", "groups": 4, "rows": 6, "columns": 16,
      "endpoints_per_switch": 4, "global_links_per_group_pair": 10, "row_bandwidth_Bps": 5.25e9,
      "row_latency_s": 1e-8, "column_bandwidth_Bps": 15.75e9, "column_latency_s": 1e-8,
      "global_bandwidth_Bps": 4.7e9, "global_latency_s": 1e-7})";
  const NodeSpec one_nic{1, 0, 0, 1, 10e9, 1e-6};
  {
    const Json j(cascade);
    CHECK(build_network(one_nic, j.view(), {})->summary().topology == "dragonfly2d");
  }
  auto cascade_with = [&](const std::string& key, const std::string& value) {
    nlohmann::json j = nlohmann::json::parse(cascade);
    j[key] = nlohmann::json::parse(value);
    const Json view(j.dump());
    return input_error([&] { (void)build_network(one_nic, view.view(), {}); });
  };
  CHECK(cascade_with("columns", "0").field() == "network.columns");
  CHECK(cascade_with("global_links_per_group_pair", "2000").field() == "network.global_links_per_group_pair");
  CHECK(cascade_with("endpoints_per_switch", "30").field() == "network.endpoints_per_switch");
  CHECK(cascade_with("local_bandwidth_Bps", "1e9").field() == "network.local_bandwidth_Bps");  // 1D key

  // fat_tree
  const std::string tree = R"({"topology": "fat_tree", "levels": 2, "leaves": 8, "spines": 4,
      "endpoints_per_leaf": 8, "leaf_spine_bandwidth_Bps": 50e9, "leaf_spine_latency_s": 1e-8})";
  const NodeSpec two_nics = small_node(4, 2);
  {
    const Json j(tree);
    CHECK(build_network(two_nics, j.view(), {})->node_count() == 32);
  }
  auto tree_with = [&](const std::string& key, const std::string& value, const NetworkOptions& o = {}) {
    nlohmann::json j = nlohmann::json::parse(tree);
    j[key] = nlohmann::json::parse(value);
    const Json view(j.dump());
    return input_error([&] { (void)build_network(two_nics, view.view(), o); });
  };
  CHECK(tree_with("levels", "4").field() == "network.levels");
  CHECK(tree_with("pods", "2").field() == "network.pods");  // 2 levels have no pods
  CHECK(tree_with("endpoints_per_leaf", "1").field() == "network.endpoints_per_leaf");
  CHECK(tree_with("endpoints_per_leaf", "62").field() == "network.endpoints_per_leaf");  // 62 + 4 > 64 ports
  CHECK(tree_with("leaves", "100").field() == "network.leaves");                         // spines need 100 down ports
  CHECK(tree_with("nodes", "33").field() == "network.nodes");
  CHECK(tree_with("routing", "\"valiant\"").field() == "network.routing");
  CHECK(tree_with("levels", "2", {.nodes_needed = 33}).field() == "network.leaves");
  const Json three_levels_without_pods(R"({"topology": "fat_tree", "levels": 3, "leaves_per_pod": 8,
      "spines_per_pod": 4, "cores_per_plane": 4, "endpoints_per_leaf": 8, "leaf_spine_bandwidth_Bps": 50e9,
      "leaf_spine_latency_s": 1e-8, "spine_core_bandwidth_Bps": 50e9, "spine_core_latency_s": 1e-8})");
  CHECK(input_error([&] { (void)build_network(two_nics, three_levels_without_pods.view(), {}); }).field() ==
        "network.pods");
}

TEST_CASE("network: rail_optimized fat trees from JSON, and their errors", "[unit]") {
  // 8 leaves = 2 scalable units x 4 rails; 16 endpoints per leaf = 16 nodes per SU.
  const std::string tree = R"({"topology": "fat_tree", "levels": 2, "leaves": 8, "spines": 16,
      "endpoints_per_leaf": 16, "leaf_spine_bandwidth_Bps": 25e9, "leaf_spine_latency_s": 1e-8,
      "rail_optimized": true})";
  const NodeSpec four_nics = small_node(4, 4);
  {
    const Json j(tree);
    const auto t = build_network(four_nics, j.view(), {});
    CHECK(t->node_count() == 32);
    CHECK(t->group_count() == 2);
    CHECK_THAT(t->describe(), Catch::Contains("rail-optimised (4 rails)"));
    CHECK(t->summary().taper == 1.0);
  }
  const auto error_with = [&](const std::string& key, const std::string& value, const NetworkOptions& o = {}) {
    nlohmann::json j = nlohmann::json::parse(tree);
    j[key] = nlohmann::json::parse(value);
    const Json view(j.dump());
    return input_error([&] { (void)build_network(four_nics, view.view(), o); });
  };
  auto e = error_with("leaves", "6");
  CHECK(e.source() == "test.json");
  CHECK(e.field() == "network.leaves");
  CHECK_THAT(e.what(),
             Catch::Contains("rail_optimized needs a multiple of the node's 4 NICs") && Catch::Contains("got 6"));
  e = error_with("rail_optimized", "\"yes\"");
  CHECK(e.field() == "network.rail_optimized");
  CHECK_THAT(e.what(), Catch::Contains("must be true or false"));
  e = error_with("nodes", "33");
  CHECK(e.field() == "network.nodes");
  CHECK_THAT(e.what(), Catch::Contains("at most 32 nodes"));
  CHECK(error_with("leaves", "8", {.nodes_needed = 33}).field() == "network.leaves");
  // 3 levels: leaves_per_pod is the key named.
  nlohmann::json three = nlohmann::json::parse(tree);
  three.erase("leaves");
  three.erase("spines");
  three.update(nlohmann::json::parse(R"({"levels": 3, "pods": 2, "leaves_per_pod": 6, "spines_per_pod": 16,
      "cores_per_plane": 6, "spine_core_bandwidth_Bps": 25e9, "spine_core_latency_s": 1e-8})"));
  const Json three_view(three.dump());
  e = input_error([&] { (void)build_network(four_nics, three_view.view(), {}); });
  CHECK(e.field() == "network.leaves_per_pod");
  // 2 endpoints per leaf: 2 nodes per SU with rails; without, a leaf cannot hold a node's 4 NICs.
  nlohmann::json small = nlohmann::json::parse(tree);
  small["endpoints_per_leaf"] = 2;
  const Json small_view(small.dump());
  CHECK(build_network(four_nics, small_view.view(), {})->node_count() == 4);
  small["rail_optimized"] = false;
  const Json no_rails(small.dump());
  e = input_error([&] { (void)build_network(four_nics, no_rails.view(), {}); });
  CHECK(e.field() == "network.endpoints_per_leaf");
}
