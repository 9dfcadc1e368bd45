#include "sim/collectives/group_layout.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace exasim::collectives {

GroupLayout group_layout(const topo::Topology& topology, const GroupCall& call) {
  GroupLayout layout;
  layout.p = call.size();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> node_member(layout.p);  // (node, member index)
  for (std::uint32_t k = 0; k < layout.p; ++k) {
    const Rank r = call.member(k);
    if (r == 0) layout.rank0_member = k;
    node_member[k] = {topology.node_of(call.gpu(r)), k};
  }
  std::sort(node_member.begin(), node_member.end());
  layout.by_node.reserve(layout.p);
  std::uint32_t run = 0;  // members on the node being counted
  bool even = true;
  for (std::uint32_t i = 0; i < layout.p; ++i) {
    layout.by_node.push_back(node_member[i].second);
    ++run;
    if (i + 1 == layout.p || node_member[i + 1].first != node_member[i].first) {
      ++layout.nodes;
      if (layout.per_node == 0) layout.per_node = run;
      even = even && run == layout.per_node;
      run = 0;
    }
  }
  if (!even) layout.per_node = 0;
  return layout;
}

std::uint32_t first_node_members(const topo::Topology& topology, const GroupCall& call, const GroupLayout& layout) {
  if (layout.p == 0) return 0;
  auto node_of = [&](std::uint32_t i) { return topology.node_of(call.gpu(call.member(layout.by_node[i]))); };
  std::uint32_t count = 1;
  while (count < layout.p && node_of(count) == node_of(0)) ++count;
  return count;
}

std::uint32_t first_node_rails(const topo::Topology& topology, const GroupCall& call, const GroupLayout& layout,
                               std::uint32_t members) {
  const std::uint32_t gpn = topology.gpus_per_node(), nics = topology.nics_per_node();
  if (nics == 0) return 0;
  std::set<std::uint32_t> used;
  for (std::uint32_t i = 0; i < members; ++i) used.insert(call.gpu(call.member(layout.by_node[i])) % gpn * nics / gpn);
  return static_cast<std::uint32_t>(used.size());
}

}  // namespace exasim::collectives
