#pragma once
// The inside of a node: how many GPUs, how they are linked to each other, and their NICs.
//
// JSON ("node" object of a machine file): gpus, gpu_gpu_bandwidth_Bps, gpu_gpu_latency_s, nics,
// nic_bandwidth_Bps, nic_latency_s, sources, and optionally gpu_links:
//  - "all_to_all" (default): NVLink/NVSwitch boards, every GPU pair linked at gpu_gpu_bandwidth_Bps;
//  - "frontier_mi250x": Frontier's 8 MI250X GCDs (gpu_links.hpp); needs gpus == 8 and takes its
//    bandwidths from the matrix, so gpu_gpu_bandwidth_Bps must be left out (it would be ignored).
//
// LIMITATIONS:
//  - a GPU reaches its NIC for free (no PCIe/ESM link is modelled); GPU g uses NIC g*nics/gpus.
//  - one latency for every GPU-GPU link (gpu_links.hpp).

#include <cstdint>
#include <string_view>

#include "topologies/gpu_links.hpp"

namespace exasim {
class JsonView;
}

namespace exasim::topo {

enum class GpuLinkLayout : std::uint8_t { AllToAll, FrontierMi250x };
[[nodiscard]] std::string_view to_string(GpuLinkLayout l);

struct NodeSpec {
  std::uint32_t gpus = 0;
  double gpu_gpu_bandwidth_Bps = 0;  ///< per direction, per GPU pair (AllToAll; 0 with a fixed matrix)
  double gpu_gpu_latency_s = 0;
  std::uint32_t nics = 0;
  double nic_bandwidth_Bps = 0;      ///< per direction, per NIC
  double nic_latency_s = 0;          ///< NIC to switch, one way
  GpuLinkLayout gpu_links = GpuLinkLayout::AllToAll;
};

[[nodiscard]] NodeSpec load_node_spec(const JsonView& view);

/// The GPU-GPU link matrix a node spec describes.
[[nodiscard]] GpuLinkMatrix gpu_link_matrix(const NodeSpec& node);

/// Which NIC of its node a GPU sends through.
[[nodiscard]] inline std::uint32_t nic_of_local_gpu(const NodeSpec& node, std::uint32_t local_gpu) {
  return local_gpu * node.nics / node.gpus;
}

}  // namespace exasim::topo
