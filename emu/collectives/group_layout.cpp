#include "emu/collectives/group_layout.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace exasim::emu {

using collectives::Algorithm;

GroupLayout group_layout(const runtime::Job& job, const topo::Topology& topology, schedule::Rank rank,
                         std::size_t dim) {
  const auto& grid = job.plan->grid;
  GroupLayout layout;
  layout.members = grid.dim(dim).size;
  layout.node = topology.node_of(job.gpu(rank));
  std::map<std::uint32_t, std::uint32_t> per_node;  // node -> members on it
  for (std::uint32_t k = 0; k < layout.members; ++k) {
    const schedule::Rank member = grid.group_member(rank, dim, k);
    const std::uint32_t node = topology.node_of(job.gpu(member));
    if (member == rank) layout.local_index = per_node[node];
    ++per_node[node];
  }
  layout.nodes = static_cast<std::uint32_t>(per_node.size());
  const std::uint32_t first = per_node.begin()->second;
  const bool even = std::all_of(per_node.begin(), per_node.end(), [&](const auto& e) { return e.second == first; });
  layout.per_node = even ? first : 0;
  return layout;
}

Algorithm emulated_algorithm(Algorithm requested, const topo::Topology& topology, const collectives::GroupCall& call,
                             const GroupLayout& layout) {
  const bool all_reduce = call.kind == schedule::CollKind::AllReduce;
  switch (requested) {
    case Algorithm::Ring: return Algorithm::Ring;
    case Algorithm::Tree: return all_reduce ? Algorithm::Tree : Algorithm::Ring;
    case Algorithm::Hierarchical: return layout.hierarchical() ? Algorithm::Hierarchical : Algorithm::Ring;
    case Algorithm::Auto: break;
  }
  const Algorithm chosen = collectives::resolve_algorithm(requested, topology, call);
  if ((chosen == Algorithm::Hierarchical && !layout.hierarchical()) || (chosen == Algorithm::Tree && !all_reduce) ||
      chosen == Algorithm::Auto)
    throw std::logic_error("collectives.algorithm auto chose " + std::string(collectives::to_string(chosen)) +
                           " for a collective the emulation cannot run it on (the rules of emu/collectives/"
                           "group_layout.hpp and sim/collectives/router.cpp disagree)");
  return chosen;
}

}  // namespace exasim::emu
