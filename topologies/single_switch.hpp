#pragma once
// Nodes under one ideal switch: the simplest machine, used by the first milestone and by tests.
//
// Links: each node's links (node_links.hpp: one per linked GPU pair, an up and a down link per NIC),
// nothing else. A route inside a node follows the GPU link matrix; between nodes it is NIC-up of the
// sender's NIC, then NIC-down of the receiver's NIC.
//
// LIMITATIONS:
//  - the switch itself has infinite capacity (a full-bisection crossbar) and unlimited ports; its
//    latency is added to the NIC-up link. Dragonfly and fat-tree machines have their own topologies.
//  - no PCIe/ESM link between GPU and NIC (see node.hpp).

#include "topologies/node_links.hpp"
#include "topologies/topology.hpp"

namespace exasim::topo {

struct SingleSwitchParams {
  NodeSpec node;
  std::uint32_t nodes = 1;
  double switch_latency_s = 0;
};

class SingleSwitch final : public Topology {
 public:
  /// Throws std::invalid_argument on an inconsistent node.
  explicit SingleSwitch(const SingleSwitchParams& params);

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::uint32_t gpu_count() const override { return p_.nodes * p_.node.gpus; }
  [[nodiscard]] std::uint32_t gpus_per_node() const override { return p_.node.gpus; }
  [[nodiscard]] std::uint32_t nics_per_node() const override { return p_.node.nics; }
  [[nodiscard]] std::uint32_t links_per_node() const override { return node_links_.per_node(); }
  [[nodiscard]] std::uint32_t switch_count() const override { return 1; }
  [[nodiscard]] std::uint32_t node_switch_count() const override { return node_links_.switched() ? node_count() : 0; }
  [[nodiscard]] LinkEnds link_ends(LinkId link) const override;
  void route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
             std::vector<LinkId>& out) const override;
  [[nodiscard]] TopologySummary summary() const override;

  [[nodiscard]] const NodeLinks& node_links() const { return node_links_; }

 private:
  SingleSwitchParams p_;
  NodeLinks node_links_;
};

}  // namespace exasim::topo
