#pragma once
// Helpers shared by the topology tests (not part of the library).

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "sim/core/json_view.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/topology.hpp"

namespace exasim::topo::testing {

/// A machine (JSON) for placement tests: 4 groups x 4 switches x 2 endpoints, 2 GPUs and 1 NIC per node:
/// 8 nodes per group (2 per switch), 32 nodes; one global link per group pair; minimal routing. GPU links
/// 100 GB/s; NIC, local and global links 25 GB/s.
inline constexpr const char* kTinyDragonflyMachine = R"({"name": "tiny-dragonfly", "gpu": "a100-40gb",
  "node": {"gpus": 2, "gpu_gpu_bandwidth_Bps": 100e9, "gpu_gpu_latency_s": 1e-6, "nics": 1,
           "nic_bandwidth_Bps": 25e9, "nic_latency_s": 1e-6},
  "network": {"topology": "dragonfly", "groups": 4, "switches_per_group": 4, "endpoints_per_switch": 2,
              "global_links_per_group_pair": 1, "local_bandwidth_Bps": 25e9, "local_latency_s": 1e-8,
              "global_bandwidth_Bps": 25e9, "global_latency_s": 1e-7, "routing": "minimal"}})";

/// Link loads set by hand, for adaptive-routing tests.
struct FakeLoad final : LinkLoadView {
  std::map<LinkId, double> flows;
  [[nodiscard]] double load(LinkId link) const override {
    auto it = flows.find(link);
    return it == flows.end() ? 0 : it->second;
  }
};

inline std::vector<LinkId> route(const Topology& t, GpuId src, GpuId dst, std::uint64_t key = 0,
                                 const LinkLoadView* load = nullptr) {
  std::vector<LinkId> r;
  t.route(src, dst, key, load, r);
  return r;
}

inline Vertex nic_vertex_of(const Topology& t, GpuId gpu) {
  const std::uint32_t gpn = t.gpus_per_node(), npn = t.nics_per_node();
  return {VertexKind::Nic, (gpu / gpn) * npn + (gpu % gpn) * npn / gpn};
}

/// Empty when `r` is a chain of existing links from GPU src to GPU dst (a GPU reaches its own NIC for
/// free); otherwise what is wrong. Plain code, no Catch assertions, so it can run in big loops.
inline std::string route_error(const Topology& t, GpuId src, GpuId dst, const std::vector<LinkId>& r) {
  if (r.empty()) return "empty route";
  Vertex at{VertexKind::Gpu, src};
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r[i] >= t.links().size()) return "link " + std::to_string(r[i]) + " does not exist";
    const LinkEnds e = t.link_ends(r[i]);
    if (!(e.from == at) && !(at.kind == VertexKind::Gpu && e.from == nic_vertex_of(t, at.index))) {
      return "hop " + std::to_string(i) + " (link " + std::to_string(r[i]) + ") does not start where hop " +
             std::to_string(i) + " - 1 ended";
    }
    at = e.to;
  }
  const Vertex dst_gpu{VertexKind::Gpu, dst};
  if (!(at == dst_gpu) && !(at == nic_vertex_of(t, dst))) return "route ends elsewhere";
  return {};
}

inline std::uint32_t switch_hops(const Topology& t, const std::vector<LinkId>& r) {
  std::uint32_t hops = 0;
  for (LinkId l : r) {
    const LinkClass c = t.links()[l].cls;
    hops += c == LinkClass::Local || c == LinkClass::LocalColumn || c == LinkClass::Global || c == LinkClass::Up ||
            c == LinkClass::Down;
  }
  return hops;
}

/// A small DGX-like machine: nodes of 4 GPUs on an NVSwitch (100 GB/s per GPU and direction) with 4
/// NICs of 25 GB/s, on a rail-optimised 2-level fat tree of 2 scalable units of `nodes_per_su` nodes
/// (8 rail leaves: leaf su * 4 + rail) and `spines` spines (leaf taper spines / nodes_per_su).
inline FatTreeParams nvswitch_rail_tree(std::uint32_t nodes_per_su, std::uint32_t spines) {
  FatTreeParams p;
  p.node = {4, 0, 1e-6, 4, 25e9, 1e-6, GpuLinkLayout::NvSwitch, 100e9};
  p.levels = 2;
  p.leaves_per_pod = 8;
  p.spines_per_pod = spines;
  p.endpoints_per_leaf = nodes_per_su;
  p.leaf_spine_bandwidth_Bps = 25e9;
  p.leaf_spine_latency_s = 1e-8;
  p.switch_latency_s = 1e-7;
  p.rail_optimized = true;
  return p;
}

/// A small 1D dragonfly: nodes of 4 GPUs (100 GB/s pairs) with 2 NICs of 25 GB/s, 25 GB/s local links,
/// and global links of `global_Bps` (below the local ones, so that flows meet on them).
inline DragonflyParams small_dragonfly_params(std::uint32_t groups, std::uint32_t switches, std::uint32_t endpoints,
                                              std::uint32_t global_links, double global_Bps, RoutingPolicy routing) {
  DragonflyParams p;
  p.node = {4, 100e9, 1e-6, 2, 25e9, 1e-6};
  p.groups = groups;
  p.switches_per_group = switches;
  p.endpoints_per_switch = endpoints;
  p.global_links_per_group_pair = global_links;
  p.local_bandwidth_Bps = 25e9;
  p.global_bandwidth_Bps = global_Bps;
  p.routing = routing;
  return p;
}

/// A JSON object as a machine file's "network" would hold it.
struct Json {
  nlohmann::json doc;
  explicit Json(const std::string& text) : doc(nlohmann::json::parse(text)) {}
  [[nodiscard]] JsonView view() const { return JsonView(doc, "test.json", "network"); }
};

}  // namespace exasim::topo::testing
