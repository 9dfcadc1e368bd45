#pragma once
// How a collective's members sit on the machine's nodes: what hierarchical routing and auto's estimate
// both need, computed once per collective from the placement (topology.node_of(call.gpu(member))).
//
// LIMITATIONS: nodes are ordered by node id, not by the members' order; a member's local index is its
// rank among its node's members in group order (so two groups on the same nodes pair alike).

#include "sim/collectives/router.hpp"

#include <cstdint>
#include <vector>

namespace exasim::collectives {

struct GroupLayout {
  std::uint32_t p = 0;         ///< members
  std::uint32_t nodes = 0;     ///< distinct nodes they sit on
  std::uint32_t per_node = 0;  ///< members on every node when all nodes hold the same number, else 0
  /// Member indices (0 .. p-1) sorted by (node, member index): with per_node = L, node i's members are
  /// by_node[i*L, (i+1)*L) and the member of local index j on node i is by_node[i*L + j].
  std::vector<std::uint32_t> by_node;
  std::int64_t rank0_member = -1;  ///< rank 0's member index, -1 when rank 0 is not a member

  /// Hierarchical applies: more than one node, each with the same number L > 1 of members.
  [[nodiscard]] bool hierarchical() const { return hierarchical_applies(nodes, per_node); }
};

[[nodiscard]] GroupLayout group_layout(const topo::Topology& topology, const GroupCall& call);

/// How many members sit on the first node of `layout` (a prefix of by_node, which is node-major).
[[nodiscard]] std::uint32_t first_node_members(const topo::Topology& topology, const GroupCall& call,
                                               const GroupLayout& layout);

/// The NICs the first node's members send through (GPU g of a node sends through NIC g x nics / gpus,
/// topologies/node.hpp), of its first `members` members; 0 when the machine has no NICs.
[[nodiscard]] std::uint32_t first_node_rails(const topo::Topology& topology, const GroupCall& call,
                                             const GroupLayout& layout, std::uint32_t members);

}  // namespace exasim::collectives
