#include "topologies/topology.hpp"

#include "topologies/summary.hpp"

#include <algorithm>

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
    case VertexKind::NodeSwitch: return "nvswitch";
  }
  return "?";
}

std::array<std::uint64_t, kLinkClassCount> Topology::link_counts() const {
  std::array<std::uint64_t, kLinkClassCount> counts{};
  for (const Link& l : links_) ++counts[static_cast<std::size_t>(l.cls)];
  return counts;
}

double Topology::latency_s(const LinkId* route, std::size_t count) const {
  double total = 0;
  if (latency_index_.size() == links_.size()) {
    for (std::size_t i = 0; i < count; ++i) total += latency_values_[latency_index_[route[i]]];
  } else {
    for (std::size_t i = 0; i < count; ++i) total += links_[route[i]].latency_s;
  }
  return total;
}

LinkId Topology::add_link(Link link) {
  const auto id = static_cast<LinkId>(links_.size());
  links_.push_back(link);
  // Keep the compact latency table while links have few distinct latencies (they have one per class).
  if (latency_index_.size() == id) {
    const auto it = std::find(latency_values_.begin(), latency_values_.end(), link.latency_s);
    if (it != latency_values_.end()) {
      latency_index_.push_back(static_cast<std::uint8_t>(it - latency_values_.begin()));
    } else if (latency_values_.size() < 256) {
      latency_index_.push_back(static_cast<std::uint8_t>(latency_values_.size()));
      latency_values_.push_back(link.latency_s);
    } else {  // too many distinct latencies: latency_s() reads links_ instead
      latency_index_.clear();
      latency_index_.shrink_to_fit();
    }
  }
  return id;
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
