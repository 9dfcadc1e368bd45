#include "topologies/node.hpp"

#include "sim/core/json_view.hpp"

namespace exasim::topo {

namespace {
/// Below 1 kB/s a link is a unit slip, not a machine (the same floor as topologies/network.cpp).
constexpr double kMinBandwidth_Bps = 1e3;
}  // namespace

std::string_view to_string(GpuLinkLayout l) {
  switch (l) {
    case GpuLinkLayout::AllToAll: return "all_to_all";
    case GpuLinkLayout::FrontierMi250x: return "frontier_mi250x";
    case GpuLinkLayout::NvSwitch: return "nvswitch";
  }
  return "?";
}

NodeSpec load_node_spec(const JsonView& v) {
  v.check_keys({"gpus", "gpu_gpu_bandwidth_Bps", "gpu_gpu_latency_s", "nics", "nic_bandwidth_Bps", "nic_latency_s",
                "gpu_links", "gpu_switch_bandwidth_Bps", "sources"});
  NodeSpec n;
  // Up to a GB200 NVL72 rack: exasim's node is the NVLink domain (docs/machines.md).
  n.gpus = static_cast<std::uint32_t>(v.integer("gpus", 1, 72));
  const std::string layout = v.choice("gpu_links", {"all_to_all", "frontier_mi250x", "nvswitch"}, "all_to_all");
  if (layout != "nvswitch" && v.has("gpu_switch_bandwidth_Bps")) {
    v.fail("gpu_switch_bandwidth_Bps", "only used with gpu_links = nvswitch (got " + layout + ")");
  }
  if (layout == "nvswitch") {
    n.gpu_links = GpuLinkLayout::NvSwitch;
    if (v.has("gpu_gpu_bandwidth_Bps")) {
      v.fail("gpu_gpu_bandwidth_Bps",
             "not used with gpu_links = nvswitch: give each GPU's link to the switch as gpu_switch_bandwidth_Bps");
    }
    n.gpu_switch_bandwidth_Bps = v.number("gpu_switch_bandwidth_Bps", kMinBandwidth_Bps, 1e15, false);
  } else if (layout == "frontier_mi250x") {
    n.gpu_links = GpuLinkLayout::FrontierMi250x;
    if (n.gpus != 8) v.fail("gpu_links", "frontier_mi250x needs gpus = 8 (got " + std::to_string(n.gpus) + ")");
    if (v.has("gpu_gpu_bandwidth_Bps")) {
      v.fail("gpu_gpu_bandwidth_Bps", "not used with gpu_links = frontier_mi250x (the matrix sets every pair)");
    }
  } else {
    n.gpu_gpu_bandwidth_Bps = v.number("gpu_gpu_bandwidth_Bps", kMinBandwidth_Bps, 1e15, false);
  }
  n.gpu_gpu_latency_s = v.number("gpu_gpu_latency_s", 0, 1, /*min_exclusive=*/false);
  n.nics = static_cast<std::uint32_t>(v.integer("nics", 1, 72));
  if (n.nics > n.gpus) {
    v.fail("nics", std::to_string(n.nics) + " NICs on a node of " + std::to_string(n.gpus) +
                       " GPUs (node.gpus): at most one NIC per GPU is supported; lower nics to " +
                       std::to_string(n.gpus) + " or fewer with the GPU count");
  }
  n.nic_bandwidth_Bps = v.number("nic_bandwidth_Bps", kMinBandwidth_Bps, 1e15, false);
  n.nic_latency_s = v.number("nic_latency_s", 0, 1, /*min_exclusive=*/false);
  return n;
}

GpuLinkMatrix gpu_link_matrix(const NodeSpec& node) {
  switch (node.gpu_links) {
    case GpuLinkLayout::FrontierMi250x: return frontier_mi250x_gcd_matrix();
    case GpuLinkLayout::NvSwitch: return {};
    case GpuLinkLayout::AllToAll: break;
  }
  return nvlink_all_to_all(node.gpus, node.gpu_gpu_bandwidth_Bps);
}

}  // namespace exasim::topo
