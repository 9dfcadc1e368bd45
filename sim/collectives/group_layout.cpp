#include "sim/collectives/group_layout.hpp"

#include <algorithm>
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

}  // namespace exasim::collectives
