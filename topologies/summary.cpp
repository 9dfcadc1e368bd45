#include "topologies/summary.hpp"

namespace exasim::topo {

nlohmann::ordered_json to_json(const TopologySummary& s) {
  nlohmann::ordered_json j;
  j["topology"] = s.topology;
  j["description"] = s.description;
  j["nodes"] = s.nodes;
  j["gpus"] = s.gpus;
  j["gpus_per_node"] = s.gpus_per_node;
  j["nics"] = s.nics;
  j["switches"] = s.switches;
  j["groups"] = s.groups;
  nlohmann::ordered_json classes = nlohmann::ordered_json::object();
  for (const auto& [name, n] : s.links_per_class) classes[name] = n;
  j["links_per_class"] = classes;
  j["global_links_per_group_pair"] = s.global_links_per_group_pair;
  j["max_minimal_switch_hops"] = s.max_minimal_switch_hops;
  j["global_bisection_bandwidth_Bps"] = s.global_bisection_bandwidth_Bps;
  j["injection_bandwidth_Bps"] = s.injection_bandwidth_Bps;
  j["taper"] = s.taper;
  if (!s.taper_per_level.empty()) j["taper_per_level"] = s.taper_per_level;
  j["routing"] = s.routing;
  return j;
}

std::string vertex_name(const Vertex& v) {
  switch (v.kind) {
    case VertexKind::Gpu: return "gpu" + std::to_string(v.index);
    case VertexKind::Nic: return "nic" + std::to_string(v.index);
    case VertexKind::Switch: return "sw" + std::to_string(v.index);
    case VertexKind::NodeSwitch: return "nvs" + std::to_string(v.index);
  }
  return "?";
}

}  // namespace exasim::topo
