#pragma once
// Link loads of a run (`exasim simulate --links`): per link class, the hottest links with their
// endpoints, and on networks with groups the bytes global links carried from group to group. Built from
// the RunResult's link_bytes and link_busy_s (runtime/link_meter.hpp) and the topology.
//
// Utilisation = bytes / (bandwidth x iteration time): the share of what the link could have carried
// in the iteration. Busy = time with at least one flow on the link (a slow flow counts as much as a
// fast one).
//
// Dimensions named in `all_to_all_dims` (those whose collectives are all-to-alls: a mixture of experts'
// ep) also get their own group matrix, built from the bytes their flows put on global links.
//
// LIMITATIONS: per direction (each direction of a physical link is its own link, as in the flow
// models); the group matrix counts global links only (traffic between groups that crosses local
// links of a third group under Valiant routing shows there as two global crossings).

#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace exasim::report {

struct LinkClassLoad {
  std::string link_class;
  std::uint64_t links = 0;  ///< of this class in the machine
  std::uint64_t used = 0;   ///< that carried any byte
  double bytes = 0;
  double mean_busy_s = 0;       ///< over the used links
  double mean_utilisation = 0;  ///< over the used links
  double max_utilisation = 0;
};

struct LinkLoad {
  topo::LinkId link = 0;
  std::string link_class, from, to;  ///< endpoints, e.g. "switch 40 (group 2)", "nic 17"
  double bytes = 0, busy_s = 0, utilisation = 0;
};

struct LinkReport {
  std::vector<LinkClassLoad> classes;            ///< classes the machine has, in LinkClass order
  std::vector<LinkLoad> hottest;                 ///< by utilisation, then bytes, then id
  std::uint32_t groups = 0;                      ///< > 1: group_bytes is groups x groups
  std::vector<std::vector<double>> group_bytes;  ///< [from][to]: bytes on global links
  /// The same matrix for the all-to-all traffic of one grid dimension.
  struct DimensionGroupBytes {
    std::string dim;
    std::vector<std::vector<double>> bytes;
  };
  std::vector<DimensionGroupBytes> all_to_all_group_bytes;  ///< per dimension in all_to_all_dims, with groups > 1
};

/// `top`: how many hottest links to list; `all_to_all_dims`: (grid dimension, its name) of the dimensions
/// carrying all-to-alls. std::invalid_argument when `result` was not metered.
[[nodiscard]] LinkReport link_report(const topo::Topology& topology, const runtime::RunResult& result, std::size_t top,
                                     const std::vector<std::pair<std::size_t, std::string>>& all_to_all_dims = {});

/// One row per link that carried bytes: link,class,from,to,bytes,busy_s,utilisation.
void write_links_csv(std::ostream& out, const topo::Topology& topology, const runtime::RunResult& result);

}  // namespace exasim::report
