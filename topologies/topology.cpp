#include "topologies/topology.hpp"

namespace exasim::topo {

std::string_view to_string(LinkClass c) {
  switch (c) {
    case LinkClass::GpuGpu: return "gpu-gpu";
    case LinkClass::GpuNic: return "gpu-nic";
    case LinkClass::NicUp: return "nic-up";
    case LinkClass::NicDown: return "nic-down";
    case LinkClass::Local: return "local";
    case LinkClass::Global: return "global";
  }
  return "?";
}

double Topology::latency_s(const std::vector<LinkId>& route) const {
  double total = 0;
  for (LinkId l : route) total += links_[l].latency_s;
  return total;
}

LinkId Topology::add_link(Link link) {
  links_.push_back(link);
  return static_cast<LinkId>(links_.size() - 1);
}

}  // namespace exasim::topo
