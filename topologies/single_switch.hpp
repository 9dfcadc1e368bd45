#pragma once
// Nodes under one ideal switch: the simplest machine, used by the first milestone and by tests.
//
// Links per node: one per ordered GPU pair (NVLink-class), and per NIC one link up to the switch and
// one down from it. A route inside a node is the direct pair link; between nodes it is
// NIC-up of the sender's NIC, then NIC-down of the receiver's NIC.
//
// LIMITATIONS:
//  - the switch itself has infinite capacity (a full-bisection crossbar); its latency is added to the
//    NIC-up link. Dragonfly and fat-tree machines come with their own topologies.
//  - no PCIe/ESM link between GPU and NIC (see node.hpp).

#include "topologies/node.hpp"
#include "topologies/topology.hpp"

namespace exasim::topo {

struct SingleSwitchParams {
  NodeSpec node;
  std::uint32_t nodes = 1;
  double switch_latency_s = 0;
};

class SingleSwitch final : public Topology {
 public:
  explicit SingleSwitch(const SingleSwitchParams& params);

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::uint32_t gpu_count() const override { return p_.nodes * p_.node.gpus; }
  [[nodiscard]] std::uint32_t gpus_per_node() const override { return p_.node.gpus; }
  void route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
             std::vector<LinkId>& out) const override;

 private:
  [[nodiscard]] LinkId pair_link(std::uint32_t node, std::uint32_t from, std::uint32_t to) const;
  [[nodiscard]] LinkId nic_link(std::uint32_t node, std::uint32_t nic, bool up) const;

  SingleSwitchParams p_;
  std::uint32_t links_per_node_ = 0;
};

}  // namespace exasim::topo
