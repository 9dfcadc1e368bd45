#include "topologies/single_switch.hpp"

#include <algorithm>
#include <stdexcept>

#include "topologies/summary.hpp"

namespace exasim::topo {

SingleSwitch::SingleSwitch(const SingleSwitchParams& params) : p_(params), node_links_(params.node) {
  const std::vector<Link> node = node_links_.node_template(p_.switch_latency_s);
  reserve_links(std::size_t{p_.nodes} * node.size());
  for (std::uint32_t n = 0; n < p_.nodes; ++n) {
    for (const Link& l : node) add_link(l);
  }
}

std::string SingleSwitch::describe() const {
  return std::to_string(p_.nodes) + " nodes x " + std::to_string(p_.node.gpus) + " GPUs under one switch";
}

LinkEnds SingleSwitch::link_ends(LinkId link) const {
  if (link >= links().size()) throw std::out_of_range("SingleSwitch::link_ends: no such link");
  return node_links_.ends(node_links_.decode(link), 0);
}

void SingleSwitch::route(GpuId src, GpuId dst, std::uint64_t /*flow_key*/, const LinkLoadView* /*load*/,
                         std::vector<LinkId>& out) const {
  if (src == dst || src >= gpu_count() || dst >= gpu_count()) throw std::logic_error("SingleSwitch::route: bad ends");
  const std::uint32_t src_node = node_of(src), dst_node = node_of(dst);
  if (src_node == dst_node) {
    node_links_.route_inside(src, dst, out);
    return;
  }
  out.push_back(node_links_.nic_link(src_node, node_links_.nic_of_gpu(src), true));
  out.push_back(node_links_.nic_link(dst_node, node_links_.nic_of_gpu(dst), false));
}

TopologySummary SingleSwitch::summary() const {
  TopologySummary s;
  s.topology = "single_switch";
  fill_common_summary(s);
  s.max_minimal_switch_hops = 0;
  // A crossbar: any half of the nodes can send at full NIC rate to the other half.
  const double per_node = double(p_.node.nics) * p_.node.nic_bandwidth_Bps;
  s.global_bisection_bandwidth_Bps = double(p_.nodes / 2) * per_node;
  s.taper = 1;
  s.routing = "minimal";
  return s;
}

}  // namespace exasim::topo
