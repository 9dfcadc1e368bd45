#pragma once
// The inside of a node: how many GPUs, how they are linked to each other, and their NICs.
//
// LIMITATIONS (first milestone):
//  - every GPU pair has its own direct link of the same bandwidth (NVLink all-to-all); Frontier's uneven
//    Infinity Fabric matrix and routing through a neighbour GCD come with the node-internals model.
//  - a GPU reaches its NIC for free (no PCIe/ESM link is modelled); GPU g uses NIC g*nics/gpus.

#include <cstdint>

namespace exasim {
class JsonView;
}

namespace exasim::topo {

struct NodeSpec {
  std::uint32_t gpus = 0;
  double gpu_gpu_bandwidth_Bps = 0;  ///< per direction, per GPU pair
  double gpu_gpu_latency_s = 0;
  std::uint32_t nics = 0;
  double nic_bandwidth_Bps = 0;      ///< per direction, per NIC
  double nic_latency_s = 0;          ///< NIC to switch, one way
};

[[nodiscard]] NodeSpec load_node_spec(const JsonView& view);

/// Which NIC of its node a GPU sends through.
[[nodiscard]] inline std::uint32_t nic_of_local_gpu(const NodeSpec& node, std::uint32_t local_gpu) {
  return local_gpu * node.nics / node.gpus;
}

}  // namespace exasim::topo
