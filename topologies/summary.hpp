#pragma once
// What `exasim topo` prints about a network, and its exports.
//
// TopologySummary holds figures every topology can state (counts, per-class link counts, bisection,
// taper), so callers never need to know which topology they hold. export_topology() writes the whole
// graph: GPUs, NICs, switches and node NVSwitch fabrics as vertices, every directed link as an edge
// with its class, bandwidth and latency.
//
// LIMITATIONS:
//  - global_bisection_bandwidth_Bps is the bandwidth across one natural cut (dragonfly: groups split
//    in two halves; fat tree: pods or leaves split in two halves; single switch: half the nodes),
//    capped by what the NICs of the smaller half can inject; it is not a min-cut over all bisections.
//  - "graphml" and "dot" go through Boost.Graph's writers, which keep the whole graph in memory
//    (Frontier: ~116k vertices, ~398k edges, a few hundred MB at most).

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "topologies/topology.hpp"

namespace exasim::topo {

struct TopologySummary {
  std::string topology;     ///< "single_switch", "dragonfly", "dragonfly2d", "fat_tree"
  std::string description;  ///< Topology::describe()
  std::uint32_t nodes = 0;
  std::uint32_t gpus = 0;
  std::uint32_t gpus_per_node = 0;
  std::uint32_t nics = 0;  ///< whole machine
  std::uint32_t switches = 0;
  std::uint32_t groups = 1;
  std::map<std::string, std::uint64_t> links_per_class;  ///< class name -> directed links (non-zero only)
  std::uint32_t global_links_per_group_pair = 0;         ///< 0 where there are no global links
  std::uint32_t max_minimal_switch_hops = 0;             ///< longest minimal route, switch-to-switch links
  double global_bisection_bandwidth_Bps = 0;             ///< per direction (see LIMITATIONS)
  double injection_bandwidth_Bps = 0;                    ///< all NICs of the machine, per direction
  /// Up-going over down-going bandwidth at the narrowest level (dragonfly: a group's global links over
  /// its NICs; fat tree: the smallest of the per-level ratios; single switch: 1).
  double taper = 1;
  std::vector<double> taper_per_level;  ///< fat tree only: leaf level first
  std::string routing;                  ///< "minimal", "valiant", "adaptive"
};

[[nodiscard]] nlohmann::ordered_json to_json(const TopologySummary& s);

/// Writes the topology graph as "graphml", "dot" (Graphviz) or "json"; throws std::invalid_argument for
/// another format. Vertex ids: gpu<N>, nic<N>, sw<N>.
void export_topology(const Topology& topology, std::string_view format, std::ostream& out);

/// Stable vertex name used by every export format.
[[nodiscard]] std::string vertex_name(const Vertex& v);

}  // namespace exasim::topo
