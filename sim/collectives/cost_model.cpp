#include "sim/collectives/internal/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace exasim::collectives {

namespace {

double max_latency(const CostInputs& in) { return std::max(in.intra.latency_s, in.inter.latency_s); }

}  // namespace

HopCost sample_hop(const topo::Topology& topology, topo::GpuId src, topo::GpuId dst) {
  std::vector<topo::LinkId> route;
  HopCost hop{topology.route_with_latency(src, dst, 0, nullptr, route), std::numeric_limits<double>::infinity()};
  for (topo::LinkId l : route) hop.bandwidth_Bps = std::min(hop.bandwidth_Bps, topology.links()[l].bandwidth_Bps);
  return hop;
}

bool applies(Algorithm algorithm, CollKind kind, const CostInputs& in) {
  if (schedule::is_p2p(kind)) return algorithm == Algorithm::Ring;
  switch (algorithm) {
    case Algorithm::Ring: return true;
    case Algorithm::Tree: return tree_applies(kind, in.p);
    case Algorithm::Hierarchical: return hierarchical_applies(in.nodes, in.per_node);
    case Algorithm::Auto:
    case Algorithm::Nccl: return false;
  }
  return false;
}

double estimate_s(Algorithm algorithm, CollKind kind, const CostInputs& in, double S) {
  if (!applies(algorithm, kind, in)) return std::numeric_limits<double>::infinity();
  const double o = in.step_overhead_s;
  const double shared_inter_Bps = in.inter.bandwidth_Bps / in.nic_share;
  switch (algorithm) {
    case Algorithm::Ring:
      return ring_steps(kind, in.p) * (max_latency(in) + o) +
             ring_wire_bytes(kind, in.p, S) / std::min(in.intra.bandwidth_Bps, in.inter.bandwidth_Bps);
    case Algorithm::Tree:
      return tree_steps(in.p) * (max_latency(in) + o) +
             tree_max_wire_bytes(in.p, S) / std::min(in.intra.bandwidth_Bps, shared_inter_Bps);
    case Algorithm::Hierarchical: {
      double t = 0;
      for (std::uint32_t s = 0; s < hierarchical_stage_count(kind); ++s) {
        const HierarchicalStage stage = hierarchical_stage(kind, in.nodes, in.per_node, S, s);
        const HopCost& hop = stage.inter_node ? in.inter : in.intra;
        const double bandwidth = stage.inter_node ? shared_inter_Bps : hop.bandwidth_Bps;
        t += hierarchical_stage_steps(stage) * (hop.latency_s + o) + hierarchical_stage_wire_bytes(stage) / bandwidth;
      }
      return t;
    }
    case Algorithm::Auto:
    case Algorithm::Nccl: break;
  }
  return std::numeric_limits<double>::infinity();
}

Algorithm choose_fastest(CollKind kind, const CostInputs& in, double S) {
  Algorithm best = Algorithm::Ring;
  double best_s = estimate_s(Algorithm::Ring, kind, in, S);
  for (Algorithm a : {Algorithm::Tree, Algorithm::Hierarchical}) {
    const double t = estimate_s(a, kind, in, S);
    if (t < best_s) {
      best = a;
      best_s = t;
    }
  }
  return best;
}

CostInputs cost_inputs(const topo::Topology& topology, const GroupCall& call, const GroupLayout& layout) {
  CostInputs in;
  in.p = layout.p;
  in.nodes = layout.nodes;
  in.per_node = layout.per_node;
  in.step_overhead_s = call.step_overhead_s;
  if (layout.p < 2) return in;
  auto gpu_of = [&](std::uint32_t i) { return call.gpu(call.member(layout.by_node[i])); };
  const topo::GpuId first = gpu_of(0);
  const std::uint32_t on_first = first_node_members(topology, call, layout);
  if (on_first > 1) in.intra = sample_hop(topology, first, gpu_of(1));
  if (on_first < layout.p) in.inter = sample_hop(topology, first, gpu_of(on_first));
  if (const std::uint32_t rails = first_node_rails(topology, call, layout, on_first); rails > 0)
    in.nic_share = std::ceil(static_cast<double>(on_first) / static_cast<double>(rails));
  return in;
}

}  // namespace exasim::collectives
