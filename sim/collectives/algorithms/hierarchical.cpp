// hierarchical: rings inside nodes and across them, stage after stage (algorithm.hpp,
// docs/collectives.md section 5).
#include "sim/collectives/group_layout.hpp"
#include "sim/collectives/internal/registry.hpp"
#include "sim/collectives/internal/route_support.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exasim::collectives {

std::uint32_t hierarchical_stage_count(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce: return 3;
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AllToAll:
    case CollKind::AllToAllReverse: return 2;
    default: throw std::logic_error("hierarchical: no stages for " + std::string(schedule::to_string(kind)));
  }
}

HierarchicalStage hierarchical_stage(CollKind kind, std::uint32_t nodes, std::uint32_t per_node, double S,
                                     std::uint32_t stage) {
  if (schedule::is_all_to_all(kind))
    throw std::logic_error("hierarchical: an all-to-all's stages are exchanges, not rings");
  if (stage >= hierarchical_stage_count(kind))
    throw std::logic_error("hierarchical " + std::string(schedule::to_string(kind)) + ": no stage " +
                           std::to_string(stage));
  const HierarchicalStage intra_rs{false, CollKind::ReduceScatter, per_node, S};
  const HierarchicalStage intra_ag{false, CollKind::AllGather, per_node, S};
  const double slice = per_node == 0 ? 0 : S / per_node;  // what each local index owns after intra RS
  switch (kind) {
    case CollKind::AllReduce:
      return stage == 0 ? intra_rs : stage == 1 ? HierarchicalStage{true, CollKind::AllReduce, nodes, slice} : intra_ag;
    case CollKind::AllGather: return stage == 0 ? HierarchicalStage{true, CollKind::AllGather, nodes, slice} : intra_ag;
    default: return stage == 0 ? intra_rs : HierarchicalStage{true, CollKind::ReduceScatter, nodes, slice};
  }
}

double hierarchical_stage_wire_bytes(const HierarchicalStage& stage) {
  return ring_wire_bytes(stage.kind, stage.ring_size, stage.bytes);
}

std::uint32_t hierarchical_stage_steps(const HierarchicalStage& stage) {
  return ring_steps(stage.kind, stage.ring_size);
}

double hierarchical_wire_bytes(CollKind kind, std::uint32_t nodes, std::uint32_t per_node, double S) {
  if (schedule::is_all_to_all(kind)) return hierarchical_all_to_all_wire_bytes(nodes, per_node, S);
  double bytes = 0;
  for (std::uint32_t s = 0; s < hierarchical_stage_count(kind); ++s)
    bytes += hierarchical_stage_wire_bytes(hierarchical_stage(kind, nodes, per_node, S, s));
  return bytes;
}

std::uint32_t hierarchical_steps(CollKind kind, std::uint32_t nodes, std::uint32_t per_node) {
  if (schedule::is_all_to_all(kind)) return hierarchical_stage_count(kind);
  std::uint32_t steps = 0;
  for (std::uint32_t s = 0; s < hierarchical_stage_count(kind); ++s)
    steps += hierarchical_stage_steps(hierarchical_stage(kind, nodes, per_node, 0, s));
  return steps;
}

namespace detail {

namespace {

/// Its intra stages at the intra hop, its inter stage at the inter hop with inter bw / nic_share.
double estimate_s(CollKind kind, const CostInputs& in, double S) {
  const double shared_inter_Bps = in.inter.bandwidth_Bps / in.nic_share;
  double t = 0;
  for (std::uint32_t s = 0; s < hierarchical_stage_count(kind); ++s) {
    const HierarchicalStage stage = hierarchical_stage(kind, in.nodes, in.per_node, S, s);
    const HopCost& hop = stage.inter_node ? in.inter : in.intra;
    const double bandwidth = stage.inter_node ? shared_inter_Bps : hop.bandwidth_Bps;
    t += hierarchical_stage_steps(stage) * (hop.latency_s + in.step_overhead_s) +
         hierarchical_stage_wire_bytes(stage) / bandwidth;
  }
  return t;
}

/// Stage `stage_index`: rings inside each node or across nodes.
void route(const topo::Topology& topology, const GroupCall& call, std::uint32_t stage_index,
           const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  if (schedule::is_all_to_all(call.kind)) {
    route_hierarchical_all_to_all(topology, call, stage_index, load, on_hop, out);
    return;
  }
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

/// Stage `stage_index`'s rings: L of N members across nodes or N of L inside them, over the stage's
/// buffer (the emulation runs each as a ring collective of that kind, size and buffer). An all-to-all's
/// stages are exchanges: no ring.
StageRing stage_ring(const topo::Topology& topology, const GroupCall& call, std::uint32_t stage_index) {
  if (schedule::is_all_to_all(call.kind)) return StageRing{call.kind, 0, call.bytes};
  const GroupLayout layout = group_layout(topology, call);
  const HierarchicalStage stage = hierarchical_stage(call.kind, layout.nodes, layout.per_node, call.bytes, stage_index);
  return StageRing{stage.kind, stage.ring_size, stage.bytes};
}

}  // namespace

const AlgorithmEntry& hierarchical_algorithm() {
  static const AlgorithmEntry entry{"hierarchical",
                                    [](const topo::Topology& topology, const GroupCall& call) {
                                      if (schedule::is_p2p(call.kind)) return Algorithm::Ring;
                                      if (group_layout(topology, call).hierarchical()) return Algorithm::Hierarchical;
                                      return schedule::is_all_to_all(call.kind) ? Algorithm::Direct : Algorithm::Ring;
                                    },
                                    [](CollKind kind, const CostInputs& in) {
                                      return !schedule::is_p2p(kind) && !schedule::is_all_to_all(kind) &&
                                             hierarchical_applies(in.nodes, in.per_node);
                                    },
                                    estimate_s,
                                    [](CollKind kind, const CostInputs& in, double S) {
                                      return ClosedForm{hierarchical_wire_bytes(kind, in.nodes, in.per_node, S),
                                                        hierarchical_steps(kind, in.nodes, in.per_node)};
                                    },
                                    ring_analytic_cost,
                                    [](const GroupCall& call) { return hierarchical_stage_count(call.kind); },
                                    route,
                                    /*joins_any_members=*/false,
                                    /*bundles_are_cycles=*/true,
                                    /*may_split_by_node=*/true,
                                    /*emulated_by=*/Algorithm::Hierarchical,
                                    stage_ring};
  return entry;
}

}  // namespace detail

}  // namespace exasim::collectives
