#include "sim/flow/nic_mirrors.hpp"

#include "sim/collectives/algorithm.hpp"
#include "sim/schedule/plan.hpp"

#include <algorithm>
#include <cstdint>

namespace exasim::flow {

namespace {

constexpr topo::LinkId kNone = 0xffffffffu;

/// Marks the nodes that hold two or more members of a group along `d` whose members span nodes.
void mark_shared_nodes(const topo::Topology& topology, const runtime::Job& job, std::size_t d,
                       std::vector<char>& shared) {
  const auto& grid = job.plan->grid;
  const std::uint32_t p = grid.dim(d).size, stride = grid.dim(d).stride;
  std::vector<std::uint32_t> nodes(p);
  for (schedule::Rank first = 0; first < grid.world_size(); ++first) {
    if (grid.coord(first, d) != 0) continue;
    for (std::uint32_t k = 0; k < p; ++k) nodes[k] = topology.node_of(job.gpu(first + k * stride));
    std::sort(nodes.begin(), nodes.end());
    if (nodes.front() == nodes.back()) continue;  // inside one node: no NIC
    for (std::uint32_t k = 1; k < p; ++k)
      if (nodes[k] == nodes[k - 1]) shared[nodes[k]] = 1;
  }
}

}  // namespace

std::vector<std::pair<topo::LinkId, topo::LinkId>> mirrored_nic_pairs(const topo::Topology& topology,
                                                                      const runtime::Job& job) {
  const auto& plan = *job.plan;
  if (!collectives::bundles_are_cycles(job.collective_algorithm)) return {};
  std::vector<char> collective_dim(plan.grid.dims().size(), 0);
  for (const auto& stream : plan.streams)
    for (const auto& op : stream.ops) {
      if (op.type != schedule::OpType::CollStart) continue;
      // Send/Recv and all-to-all (always direct exchanges, router.hpp) are not closed walks.
      if (schedule::is_p2p(op.coll) || schedule::is_all_to_all(op.coll)) return {};
      collective_dim[op.dim] = 1;
    }
  std::vector<char> shared(topology.node_count(), 0);
  for (std::size_t d = 0; d < collective_dim.size(); ++d)
    if (collective_dim[d] && plan.grid.dim(d).size > 1) mark_shared_nodes(topology, job, d, shared);

  // Each NIC's two links, by the NIC's vertex index (node * nics_per_node() + k).
  const std::uint32_t nics = topology.node_count() * topology.nics_per_node();
  std::vector<topo::LinkId> up(nics, kNone), down(nics, kNone);
  const auto& links = topology.links();
  for (topo::LinkId l = 0; l < links.size(); ++l) {
    if (links[l].cls != topo::LinkClass::NicUp && links[l].cls != topo::LinkClass::NicDown) continue;
    const topo::LinkEnds ends = topology.link_ends(l);
    const bool is_up = links[l].cls == topo::LinkClass::NicUp;
    const topo::Vertex nic = is_up ? ends.from : ends.to;
    if (nic.kind != topo::VertexKind::Nic || nic.index >= nics) return {};  // not the layout assumed above
    (is_up ? up : down)[nic.index] = l;
  }
  std::vector<std::pair<topo::LinkId, topo::LinkId>> pairs;
  for (std::uint32_t n = 0; n < nics; ++n) {
    if (up[n] == kNone || down[n] == kNone || shared[n / topology.nics_per_node()]) continue;
    if (links[up[n]].bandwidth_Bps != links[down[n]].bandwidth_Bps || !(up[n] < down[n])) continue;
    pairs.emplace_back(up[n], down[n]);
  }
  return pairs;
}

}  // namespace exasim::flow
