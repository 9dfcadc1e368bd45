#include "topologies/single_switch.hpp"

#include <stdexcept>

namespace exasim::topo {

SingleSwitch::SingleSwitch(const SingleSwitchParams& params) : p_(params) {
  const auto g = p_.node.gpus;
  links_per_node_ = g * g + 2 * p_.node.nics;  // g*g pair slots (diagonal unused) keeps indexing trivial
  for (std::uint32_t node = 0; node < p_.nodes; ++node) {
    for (std::uint32_t slot = 0; slot < g * g; ++slot) {
      add_link({p_.node.gpu_gpu_bandwidth_Bps, p_.node.gpu_gpu_latency_s, LinkClass::GpuGpu});
    }
    for (std::uint32_t nic = 0; nic < p_.node.nics; ++nic) {
      add_link({p_.node.nic_bandwidth_Bps, p_.node.nic_latency_s + p_.switch_latency_s, LinkClass::NicUp});
      add_link({p_.node.nic_bandwidth_Bps, p_.node.nic_latency_s, LinkClass::NicDown});
    }
  }
}

std::string SingleSwitch::describe() const {
  return std::to_string(p_.nodes) + " nodes x " + std::to_string(p_.node.gpus) + " GPUs under one switch";
}

LinkId SingleSwitch::pair_link(std::uint32_t node, std::uint32_t from, std::uint32_t to) const {
  return node * links_per_node_ + from * p_.node.gpus + to;
}

LinkId SingleSwitch::nic_link(std::uint32_t node, std::uint32_t nic, bool up) const {
  return node * links_per_node_ + p_.node.gpus * p_.node.gpus + 2 * nic + (up ? 0 : 1);
}

void SingleSwitch::route(GpuId src, GpuId dst, std::uint64_t /*flow_key*/, const LinkLoadView* /*load*/,
                         std::vector<LinkId>& out) const {
  if (src == dst || src >= gpu_count() || dst >= gpu_count()) throw std::logic_error("SingleSwitch::route: bad ends");
  const auto g = p_.node.gpus;
  const std::uint32_t src_node = src / g, dst_node = dst / g;
  if (src_node == dst_node) {
    out.push_back(pair_link(src_node, src % g, dst % g));
    return;
  }
  out.push_back(nic_link(src_node, nic_of_local_gpu(p_.node, src % g), true));
  out.push_back(nic_link(dst_node, nic_of_local_gpu(p_.node, dst % g), false));
}

}  // namespace exasim::topo
