#include "sim/collectives/router.hpp"

#include "sim/collectives/double_binary_tree.hpp"
#include "sim/collectives/flow_key.hpp"
#include "sim/collectives/group_layout.hpp"
#include "sim/collectives/internal/cost_model.hpp"
#include "sim/collectives/internal/nccl_route.hpp"
#include "sim/collectives/internal/route_support.hpp"
#include "sim/core/hash.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exasim::collectives {

namespace {

using detail::call_key;
using detail::end_bundle;
using detail::route_hop;

std::int64_t rank0_member(const GroupCall& call) {
  for (std::uint32_t k = 0; k < call.size(); ++k)
    if (call.member(k) == 0) return k;
  return -1;
}

/// The ring of today: member k sends to member k+1, in group order, as one bundle.
void route_ring(const topo::Topology& topology, const GroupCall& call, const topo::LinkLoadView* load,
                const OnHop& on_hop, StageRoute& out) {
  const std::uint32_t p = call.size();
  const double wire = ring_wire_bytes(call.kind, p, call.bytes);
  const std::uint64_t key = call_key(call);
  double hop_latency_s = 0;
  bool rank0_member = false;
  // Members by their stride (member() divides twice a call: ~1 % of a spread run in route_ring()).
  const Rank first = call.member(0);
  const std::uint32_t stride = call.member_stride();
  for (std::uint32_t k = 0; k < p; ++k) {
    const Rank src = first + k * stride, dst = k + 1 == p ? first : src + stride;
    hop_latency_s = std::max(hop_latency_s, route_hop(topology, call, key, src, dst, k, load, on_hop, out));
    rank0_member = rank0_member || src == 0;
  }
  end_bundle(out, 0, wire);
  out.latency_s = ring_steps(call.kind, p) * (hop_latency_s + call.step_overhead_s);
  if (rank0_member) out.rank0_wire_bytes = wire;
}

/// The double binary tree: per tree, one bundle of every edge up (reduce) then every edge down
/// (broadcast), S/2 per hop.
void route_tree(const topo::Topology& topology, const GroupCall& call, const topo::LinkLoadView* load,
                const OnHop& on_hop, StageRoute& out) {
  const std::uint32_t p = call.size();
  const std::uint64_t key = call_key(call);
  double hop_latency_s = 0;
  std::uint32_t index = 0;
  auto hop = [&](std::uint32_t from, std::int64_t to) {
    const std::uint32_t position = hop_position(PositionTag::Tree, 0, index++);
    hop_latency_s =
        std::max(hop_latency_s, route_hop(topology, call, key, call.member(from),
                                          call.member(static_cast<std::uint32_t>(to)), position, load, on_hop, out));
  };
  for (int tree = 0; tree < 2; ++tree) {
    const std::size_t begin = out.links.size();
    for (std::uint32_t r = 0; r < p; ++r) {
      const auto parent = double_binary_tree_links(p, r, tree).parent;
      if (parent != kNoMember) hop(r, parent);
    }
    for (std::uint32_t r = 0; r < p; ++r) {
      const auto parent = double_binary_tree_links(p, r, tree).parent;
      if (parent != kNoMember) hop(static_cast<std::uint32_t>(parent), r);
    }
    end_bundle(out, begin, call.bytes / 2);
  }
  out.latency_s = tree_steps(p) * (hop_latency_s + call.step_overhead_s);
  if (const auto m = rank0_member(call); m >= 0)
    out.rank0_wire_bytes = tree_wire_bytes(p, static_cast<std::uint32_t>(m), call.bytes);
}

/// Stage `stage` of the hierarchical algorithm: rings inside each node or across nodes.
void route_hierarchical(const topo::Topology& topology, const GroupCall& call, std::uint32_t stage_index,
                        const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  const GroupLayout layout = group_layout(topology, call);
  if (!layout.hierarchical())
    throw std::logic_error(
        "route_stage: hierarchical needs members spread evenly, more than one per node, over "
        "more than one node (resolve_algorithm falls back to ring)");
  const std::uint32_t n = layout.nodes, L = layout.per_node;
  const HierarchicalStage stage = hierarchical_stage(call.kind, n, L, call.bytes, stage_index);
  const double wire = hierarchical_stage_wire_bytes(stage);
  const std::uint64_t key = call_key(call);
  double hop_latency_s = 0;
  std::uint32_t index = 0;
  // Ring number `ring` has `size` members; member(ring, k) is the k-th.
  auto route_rings = [&](std::uint32_t rings, std::uint32_t size, auto member_of) {
    for (std::uint32_t ring = 0; ring < rings; ++ring) {
      const std::size_t begin = out.links.size();
      for (std::uint32_t k = 0; k < size; ++k) {
        const Rank src = call.member(member_of(ring, k)), dst = call.member(member_of(ring, (k + 1) % size));
        const std::uint32_t position = hop_position(PositionTag::Hierarchical, stage_index, index++);
        hop_latency_s = std::max(hop_latency_s, route_hop(topology, call, key, src, dst, position, load, on_hop, out));
      }
      end_bundle(out, begin, wire);
    }
  };
  if (stage.inter_node)
    route_rings(L, n, [&](std::uint32_t j, std::uint32_t i) { return layout.by_node[i * L + j]; });
  else
    route_rings(n, L, [&](std::uint32_t i, std::uint32_t j) { return layout.by_node[i * L + j]; });
  out.latency_s = hierarchical_stage_steps(stage) * (hop_latency_s + call.step_overhead_s);
  if (layout.rank0_member >= 0) out.rank0_wire_bytes = wire;
}

}  // namespace

Algorithm resolve_algorithm(Algorithm requested, const topo::Topology& topology, const GroupCall& call) {
  switch (requested) {
    case Algorithm::Ring: return Algorithm::Ring;
    case Algorithm::Tree: return tree_applies(call.kind, call.size()) ? Algorithm::Tree : Algorithm::Ring;
    case Algorithm::Hierarchical:
      if (schedule::is_p2p(call.kind)) return Algorithm::Ring;
      return group_layout(topology, call).hierarchical() ? Algorithm::Hierarchical : Algorithm::Ring;
    case Algorithm::Nccl: return schedule::is_p2p(call.kind) || call.size() < 2 ? Algorithm::Ring : Algorithm::Nccl;
    case Algorithm::Auto: {
      if (schedule::is_p2p(call.kind) || call.size() < 2) return Algorithm::Ring;
      const GroupLayout layout = group_layout(topology, call);
      return choose_fastest(call.kind, cost_inputs(topology, call, layout), call.bytes);
    }
  }
  throw std::logic_error("resolve_algorithm: unknown algorithm");
}

std::uint32_t stage_count(Algorithm resolved, const topo::Topology& /*topology*/, const GroupCall& call) {
  switch (resolved) {
    case Algorithm::Ring:
    case Algorithm::Tree:
    case Algorithm::Nccl: return 1;
    case Algorithm::Hierarchical: return hierarchical_stage_count(call.kind);
    case Algorithm::Auto: break;
  }
  throw std::logic_error("stage_count: resolve the algorithm first (auto)");
}

namespace {

void route_whole_stage(Algorithm resolved, const topo::Topology& topology, const GroupCall& call, std::uint32_t stage,
                       const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  out.clear();
  if (stage >= stage_count(resolved, topology, call))
    throw std::logic_error("route_stage: no stage " + std::to_string(stage) + " for " +
                           std::string(to_string(resolved)));
  switch (resolved) {
    case Algorithm::Ring: route_ring(topology, call, load, on_hop, out); return;
    case Algorithm::Tree:
      if (call.kind != CollKind::AllReduce) throw std::logic_error("route_stage: tree runs all-reduce only");
      route_tree(topology, call, load, on_hop, out);
      return;
    case Algorithm::Hierarchical: route_hierarchical(topology, call, stage, load, on_hop, out); return;
    case Algorithm::Nccl: route_nccl(topology, call, load, on_hop, out); return;
    case Algorithm::Auto: break;
  }
}

}  // namespace

void route_stage(Algorithm resolved, const topo::Topology& topology, const GroupCall& call, std::uint32_t stage,
                 const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  const std::uint32_t parts = topology.route_parts();
  if (parts <= 1) {
    route_whole_stage(resolved, topology, call, stage, load, on_hop, out);
    return;
  }
  // Part k routes the whole stage again under its own flow keys (part 0 under the call's), after the
  // parts before it were reported through on_hop: adaptive routing sees them as load. Each bundle of a
  // part carries 1/parts of the bytes; the stage's latency is its slowest part's.
  out.clear();
  thread_local StageRoute part;
  for (std::uint32_t k = 0; k < parts; ++k) {
    GroupCall part_call = call;
    if (k > 0) part_call.seed = mix64(call.seed ^ (0x9e3779b97f4a7c15ull * k));
    route_whole_stage(resolved, topology, part_call, stage, load, on_hop, part);
    const auto base = static_cast<std::uint32_t>(out.links.size());
    out.links.insert(out.links.end(), part.links.begin(), part.links.end());
    for (StageRoute::Bundle b : part.bundles) {
      b.begin += base;
      b.bytes /= parts;
      out.bundles.push_back(b);
    }
    out.latency_s = std::max(out.latency_s, part.latency_s);
    out.rank0_wire_bytes = part.rank0_wire_bytes;  // the stage's, whatever the keys
  }
}

void route_all_to_all(const topo::Topology& topology, const GroupCall& call, const topo::LinkLoadView* load,
                      const OnHop& on_hop, StageRoute& out) {
  out.clear();
  const std::uint32_t p = call.size();
  if (p < 2) return;
  const double share = call.bytes / p;
  const std::uint64_t key = call_key(call);
  double hop_latency_s = 0;
  std::uint32_t index = 0;
  for (std::uint32_t i = 0; i < p; ++i) {
    for (std::uint32_t d = 1; d < p; ++d) {
      const std::size_t begin = out.links.size();
      const std::uint32_t position = hop_position(PositionTag::AllToAll, 0, index++);
      hop_latency_s = std::max(hop_latency_s, route_hop(topology, call, key, call.member(i), call.member((i + d) % p),
                                                        position, load, on_hop, out));
      end_bundle(out, begin, share);
    }
  }
  out.latency_s = all_to_all_steps(p) * (hop_latency_s + call.step_overhead_s);
  if (rank0_member(call) >= 0) out.rank0_wire_bytes = all_to_all_wire_bytes(p, call.bytes);
}

}  // namespace exasim::collectives
