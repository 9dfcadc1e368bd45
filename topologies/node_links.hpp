#pragma once
// The links every node owns, laid out identically in every node so that their ids are arithmetic:
// node n owns ids [n * per_node(), (n + 1) * per_node()): first one link per linked ordered GPU pair
// (in row-major pair order), then per NIC k its up link (k-th NIC to its switch) and down link.
// Every topology puts these links first, before its switch-to-switch links.
//
// Shared by all topologies so that node internals (NVLink all-to-all, Frontier's GCD matrix, routing
// through an intermediate GCD) behave the same on every network.
//
// LIMITATIONS: see node.hpp and gpu_links.hpp (no GPU-NIC link; one latency for GPU-GPU links).

#include <cstdint>
#include <vector>

#include "topologies/gpu_links.hpp"
#include "topologies/node.hpp"
#include "topologies/topology.hpp"

namespace exasim::topo {

class NodeLinks {
 public:
  /// Uses gpu_link_matrix(node) when `matrix` is empty (gpus == 0). Throws std::invalid_argument for an
  /// inconsistent node (no GPU or NIC, more NICs than GPUs, a matrix of another size or with an
  /// unreachable pair).
  explicit NodeLinks(const NodeSpec& node, GpuLinkMatrix matrix = {});

  [[nodiscard]] const NodeSpec& node() const { return node_; }
  [[nodiscard]] const GpuLinkMatrix& matrix() const { return matrix_; }
  [[nodiscard]] std::uint32_t per_node() const { return per_node_; }

  /// The links of one node, in layout order. `switch_latency_s` is added to the NIC-up link: the switch
  /// the NIC enters is crossed once per route, like every switch-entering link elsewhere.
  [[nodiscard]] std::vector<Link> node_template(double switch_latency_s) const;

  [[nodiscard]] LinkId gpu_link(std::uint32_t node, std::uint32_t from, std::uint32_t to) const;
  [[nodiscard]] LinkId nic_link(std::uint32_t node, std::uint32_t nic, bool up) const;
  [[nodiscard]] std::uint32_t nic_of_gpu(GpuId gpu) const { return nic_of_local_gpu(node_, gpu % node_.gpus); }

  /// Appends the route between two GPUs of the same node: the direct link, or two links through the
  /// matrix's fixed intermediate GPU.
  void route_inside(GpuId src, GpuId dst, std::vector<LinkId>& out) const;

  /// What a node-owned link (id < nodes * per_node()) is.
  struct Decoded {
    std::uint32_t node = 0;
    bool is_nic = false;
    std::uint32_t from_gpu = 0, to_gpu = 0;  ///< local GPU numbers (GPU-GPU links)
    std::uint32_t nic = 0;                   ///< local NIC number (NIC links)
    bool up = false;
  };
  [[nodiscard]] Decoded decode(LinkId link) const;
  /// Ends of a node-owned link, given the switch its NIC is attached to (ignored for GPU-GPU links).
  [[nodiscard]] LinkEnds ends(const Decoded& d, std::uint32_t nic_switch) const;

 private:
  NodeSpec node_;
  GpuLinkMatrix matrix_;
  std::uint32_t pair_slots_ = 0;
  std::uint32_t per_node_ = 0;
  std::vector<std::uint32_t> pair_slot_;  ///< gpus x gpus -> slot among the node's GPU links, or none
  std::vector<std::uint32_t> via_;        ///< gpus x gpus -> intermediate GPU of unlinked pairs, or none
  std::vector<std::uint32_t> slot_pair_;  ///< slot -> from * gpus + to
};

}  // namespace exasim::topo
