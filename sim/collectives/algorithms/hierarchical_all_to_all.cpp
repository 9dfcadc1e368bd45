// hierarchical all-to-all: an intra-node exchange, then an inter-node one among the members of equal
// local index (router.hpp; closed forms in algorithm.hpp). Routed as part of the hierarchical entry
// (hierarchical.cpp), which hands all-to-alls here.
#include "sim/collectives/group_layout.hpp"
#include "sim/collectives/internal/registry.hpp"
#include "sim/collectives/internal/route_support.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::collectives {

double hierarchical_all_to_all_wire_bytes(std::uint32_t nodes, std::uint32_t per_node, double S) {
  if (nodes == 0 || per_node == 0) return 0;
  return static_cast<double>(per_node - 1) / per_node * S + static_cast<double>(nodes - 1) / nodes * S;
}

namespace detail {

void route_hierarchical_all_to_all(const topo::Topology& topology, const GroupCall& call, std::uint32_t stage,
                                   const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  const GroupLayout layout = group_layout(topology, call);
  if (!layout.hierarchical() || stage > 1)
    throw std::logic_error(
        "route_stage: the hierarchical all-to-all needs members spread evenly, more than one "
        "per node, over more than one node, and has two stages");
  const std::uint32_t p = layout.p, n = layout.nodes, L = layout.per_node;
  const auto member = [&](std::uint32_t node, std::uint32_t local) { return layout.by_node[node * L + local]; };
  const auto pair_bytes = [&](std::uint32_t from, std::uint32_t to) {
    return from == to ? 0.0 : schedule::all_to_all_pair_bytes(call.kind, p, call.bytes, call.shares, from, to);
  };
  const std::uint64_t key = call_key(call);
  double hop_latency_s = 0;
  std::uint32_t index = 0;
  auto send = [&](std::uint32_t from, std::uint32_t to, double bytes) {
    if (!(bytes > 0)) return;
    const std::size_t begin = out.links.size();
    const std::uint32_t position = hop_position(PositionTag::Hierarchical, stage, index++);
    hop_latency_s = std::max(
        hop_latency_s, route_hop(topology, call, key, call.member(from), call.member(to), position, load, on_hop, out));
    end_bundle(out, begin, bytes);
    if (static_cast<std::int64_t>(from) == layout.rank0_member) out.rank0_wire_bytes += bytes;
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t j = 0; j < L; ++j) {
      if (stage == 0) {
        // Member (i, j) hands its node-mate (i, t) everything bound for local index t on every node.
        for (std::uint32_t t = 0; t < L; ++t) {
          if (t == j) continue;
          double bytes = 0;
          for (std::uint32_t b = 0; b < n; ++b) bytes += pair_bytes(member(i, j), member(b, t));
          send(member(i, j), member(i, t), bytes);
        }
      } else {
        // Member (i, j) now holds what node i's members send to local index j elsewhere: one transfer per node.
        for (std::uint32_t b = 0; b < n; ++b) {
          if (b == i) continue;
          double bytes = 0;
          for (std::uint32_t l = 0; l < L; ++l) bytes += pair_bytes(member(i, l), member(b, j));
          send(member(i, j), member(b, j), bytes);
        }
      }
    }
  }
  out.latency_s = hop_latency_s + call.step_overhead_s;  // one step per stage
}

}  // namespace detail

}  // namespace exasim::collectives
