#pragma once
// The links every node owns, laid out identically in every node so that their ids are arithmetic:
// node n owns ids [n * per_node(), (n + 1) * per_node()): first its GPU links, then per NIC k its up
// link (k-th NIC to its switch) and down link. GPU links: one per linked ordered GPU pair (in row-major
// pair order) for a link matrix (all_to_all, frontier_mi250x); with an NVSwitch (node.hpp), per GPU g
// its up link (GPU to the node's switch fabric) and down link, at 2g and 2g + 1. All GPU links are of
// class GpuGpu: no route but one inside the node crosses them (node_flows.hpp relies on it).
// Every topology puts these links first, before its switch-to-switch links.
//
// Shared by all topologies so that node internals (NVLink all-to-all, Frontier's GCD matrix, routing
// through an intermediate GCD) behave the same on every network.
//
// LIMITATIONS: see node.hpp and gpu_links.hpp (no GPU-NIC link; one latency for GPU-GPU links).

#include <cstdint>
#include <vector>

#include "sim/core/fast_divisor.hpp"
#include "topologies/gpu_links.hpp"
#include "topologies/node.hpp"
#include "topologies/topology.hpp"

namespace exasim::topo {

class NodeLinks {
 public:
  /// Uses gpu_link_matrix(node) when `matrix` is empty (gpus == 0). Throws std::invalid_argument for an
  /// inconsistent node (no GPU or NIC, more NICs than GPUs, a matrix of another size or with an
  /// unreachable pair, a matrix given for an NVSwitch node).
  explicit NodeLinks(const NodeSpec& node, GpuLinkMatrix matrix = {});

  [[nodiscard]] const NodeSpec& node() const { return node_; }
  /// Empty (gpus == 0) for an NVSwitch node.
  [[nodiscard]] const GpuLinkMatrix& matrix() const { return matrix_; }
  /// Whether the GPUs reach each other through the node's NVSwitch fabric.
  [[nodiscard]] bool switched() const { return node_.gpu_links == GpuLinkLayout::NvSwitch; }
  [[nodiscard]] std::uint32_t per_node() const { return per_node_; }

  /// The links of one node, in layout order. `switch_latency_s` is added to the NIC-up link: the switch
  /// the NIC enters is crossed once per route, like every switch-entering link elsewhere.
  [[nodiscard]] std::vector<Link> node_template(double switch_latency_s) const;

  /// The direct link of a GPU pair (matrix layouts only).
  [[nodiscard]] LinkId gpu_link(std::uint32_t node, std::uint32_t from, std::uint32_t to) const;
  /// A GPU's link up to its node's NVSwitch fabric, or down from it (NVSwitch nodes only).
  [[nodiscard]] LinkId switch_link(std::uint32_t node, std::uint32_t gpu, bool up) const;
  [[nodiscard]] LinkId nic_link(std::uint32_t node, std::uint32_t nic, bool up) const;
  [[nodiscard]] std::uint32_t nic_of_gpu(GpuId gpu) const { return nic_of_local_gpu(node_, gpu % node_.gpus); }
  /// The node of a GPU, without a division (routing asks it for both ends of every hop).
  [[nodiscard]] std::uint32_t node_of_gpu(GpuId gpu) const { return per_gpus_.div(gpu); }

  /// Appends the route between two GPUs of the same node: the direct link, or two links through the
  /// matrix's fixed intermediate GPU, or (NVSwitch) the sender's up link and the receiver's down link.
  void route_inside(GpuId src, GpuId dst, std::vector<LinkId>& out) const;

  /// What a node-owned link (id < nodes * per_node()) is.
  struct Decoded {
    std::uint32_t node = 0;
    bool is_nic = false;
    bool is_switch = false;                  ///< a GPU's link to or from the NVSwitch fabric
    std::uint32_t from_gpu = 0, to_gpu = 0;  ///< local GPU numbers (GPU-GPU links; both the GPU for
                                             ///< NVSwitch links)
    std::uint32_t nic = 0;                   ///< local NIC number (NIC links)
    bool up = false;                         ///< NIC and NVSwitch links: towards the switch
  };
  [[nodiscard]] Decoded decode(LinkId link) const;
  /// Ends of a node-owned link, given the switch its NIC is attached to (ignored for GPU links). The
  /// NVSwitch fabric of node n is the vertex {NodeSwitch, n}.
  [[nodiscard]] LinkEnds ends(const Decoded& d, std::uint32_t nic_switch) const;

 private:
  NodeSpec node_;
  GpuLinkMatrix matrix_;
  std::uint32_t pair_slots_ = 0;  ///< GPU links per node (pairs, or 2 per GPU with an NVSwitch)
  std::uint32_t per_node_ = 0;
  FastDivisor per_gpus_;                  ///< by node_.gpus: node_of_gpu(), route_inside()
  std::vector<std::uint32_t> pair_slot_;  ///< gpus x gpus -> slot among the node's GPU links, or none
  std::vector<std::uint32_t> via_;        ///< gpus x gpus -> intermediate GPU of unlinked pairs, or none
  std::vector<std::uint32_t> slot_pair_;  ///< slot -> from * gpus + to
};

}  // namespace exasim::topo
