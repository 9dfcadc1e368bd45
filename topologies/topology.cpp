#include "topologies/topology.hpp"

#include "topologies/summary.hpp"

namespace exasim::topo {

std::string_view to_string(LinkClass c) {
  switch (c) {
    case LinkClass::GpuGpu: return "gpu-gpu";
    case LinkClass::GpuNic: return "gpu-nic";
    case LinkClass::NicUp: return "nic-up";
    case LinkClass::NicDown: return "nic-down";
    case LinkClass::Local: return "local";
    case LinkClass::LocalColumn: return "local-column";
    case LinkClass::Global: return "global";
    case LinkClass::Up: return "up";
    case LinkClass::Down: return "down";
  }
  return "?";
}

std::string_view to_string(VertexKind k) {
  switch (k) {
    case VertexKind::Gpu: return "gpu";
    case VertexKind::Nic: return "nic";
    case VertexKind::Switch: return "switch";
  }
  return "?";
}

std::array<std::uint64_t, kLinkClassCount> Topology::link_counts() const {
  std::array<std::uint64_t, kLinkClassCount> counts{};
  for (const Link& l : links_) ++counts[static_cast<std::size_t>(l.cls)];
  return counts;
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

void Topology::fill_common_summary(TopologySummary& s) const {
  s.description = describe();
  s.nodes = node_count();
  s.gpus = gpu_count();
  s.gpus_per_node = gpus_per_node();
  s.nics = node_count() * nics_per_node();
  s.switches = switch_count();
  s.groups = group_count();
  const auto counts = link_counts();
  for (std::size_t c = 0; c < kLinkClassCount; ++c) {
    if (counts[c] > 0) s.links_per_class[std::string(to_string(static_cast<LinkClass>(c)))] = counts[c];
  }
  s.injection_bandwidth_Bps = 0;
  for (const Link& l : links_) {
    if (l.cls == LinkClass::NicUp) s.injection_bandwidth_Bps += l.bandwidth_Bps;
  }
}

}  // namespace exasim::topo
