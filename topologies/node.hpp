#pragma once
// The inside of a node: how many GPUs, how they are linked to each other, and their NICs.
//
// A node is the scale-up (NVLink) domain: the GPUs that reach each other without the network. Every
// decision between the two (routes, hierarchical collectives' node groups, the NCCL model's node count,
// placement) asks Topology::node_of, so a domain wider than one server is one node: a GB200 NVL72 rack
// (18 trays of 4 GPUs on the rack's NVLink switches) is a node of 72 GPUs, as NCCL treats a multi-node
// NVLink domain as one NVLink clique. node.gpus goes up to 72 for it.
//
// JSON ("node" object of a machine file): gpus, gpu_gpu_bandwidth_Bps, gpu_gpu_latency_s, nics,
// nic_bandwidth_Bps, nic_latency_s, sources, and optionally gpu_links:
//  - "all_to_all" (default): every GPU pair has its own link of gpu_gpu_bandwidth_Bps per direction
//    (boards whose GPUs are wired to each other directly, e.g. the 4 A100s of a Perlmutter node);
//  - "frontier_mi250x": Frontier's 8 MI250X GCDs (gpu_links.hpp); needs gpus == 8 and takes its
//    bandwidths from the matrix, so gpu_gpu_bandwidth_Bps must be left out (it would be ignored);
//  - "nvswitch": the GPUs hang off the node's NVSwitch fabric (DGX/HGX A100, H100 and B200, a GB200
//    NVL72 rack): each GPU has one link up to the fabric and one down from it at gpu_switch_bandwidth_Bps
//    per direction (all of its NVLinks together: 12 x 25 GB/s on A100, 18 x 25 GB/s on H100, 18 x 50 GB/s
//    on Blackwell), so a GPU sending to several peers at once shares that bandwidth among them, and a
//    GPU receiving from several shares its down link. A route inside the node is GPU up, then down to
//    the other GPU; each of the two links carries half of gpu_gpu_latency_s, so GPU-to-GPU latency is
//    gpu_gpu_latency_s as with a direct link. gpu_gpu_bandwidth_Bps must be left out
//    (gpu_switch_bandwidth_Bps replaces it).
//
// LIMITATIONS:
//  - a GPU reaches its NIC for free (no PCIe/ESM link is modelled); GPU g uses NIC g*nics/gpus.
//  - one latency for every GPU-GPU link (gpu_links.hpp).
//  - nvswitch: the fabric itself is non-blocking (NVSwitch is: every GPU port at full rate at once);
//    no NVLink SHARP (in-switch reduction), which NCCL uses on H100 for all-reduce inside a node.
//  - a domain is one node: the servers inside an NVLink domain (an NVL72's trays) are not told apart,
//    so an allocation is whole domains (`exasim place --nodes` counts racks), and a GPU's NIC is on its
//    own domain's node.

#include <cstdint>
#include <string_view>

#include "topologies/gpu_links.hpp"

namespace exasim {
class JsonView;
}

namespace exasim::topo {

enum class GpuLinkLayout : std::uint8_t { AllToAll, FrontierMi250x, NvSwitch };
[[nodiscard]] std::string_view to_string(GpuLinkLayout l);

struct NodeSpec {
  std::uint32_t gpus = 0;
  double gpu_gpu_bandwidth_Bps = 0;  ///< per direction, per GPU pair (AllToAll; 0 with a fixed matrix)
  double gpu_gpu_latency_s = 0;
  std::uint32_t nics = 0;
  double nic_bandwidth_Bps = 0;  ///< per direction, per NIC
  double nic_latency_s = 0;      ///< NIC to switch, one way
  GpuLinkLayout gpu_links = GpuLinkLayout::AllToAll;
  double gpu_switch_bandwidth_Bps = 0;  ///< NvSwitch: per direction, each GPU to the node's fabric
};

[[nodiscard]] NodeSpec load_node_spec(const JsonView& view);

/// The GPU-GPU link matrix a node spec describes (empty, gpus == 0, for NvSwitch: no direct links).
[[nodiscard]] GpuLinkMatrix gpu_link_matrix(const NodeSpec& node);

/// Which NIC of its node a GPU sends through.
[[nodiscard]] inline std::uint32_t nic_of_local_gpu(const NodeSpec& node, std::uint32_t local_gpu) {
  return local_gpu * node.nics / node.gpus;
}

}  // namespace exasim::topo
