#include "sim/collectives/internal/cost_model.hpp"

#include "sim/collectives/internal/registry.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace exasim::collectives {

HopCost sample_hop(const topo::Topology& topology, topo::GpuId src, topo::GpuId dst) {
  std::vector<topo::LinkId> route;
  HopCost hop{topology.route_with_latency(src, dst, 0, nullptr, route), std::numeric_limits<double>::infinity()};
  for (topo::LinkId l : route) hop.bandwidth_Bps = std::min(hop.bandwidth_Bps, topology.links()[l].bandwidth_Bps);
  return hop;
}

bool applies(Algorithm algorithm, CollKind kind, const CostInputs& in) {
  const auto& candidate = detail::entry(algorithm);
  return candidate.applies != nullptr && candidate.applies(kind, in);
}

double estimate_s(Algorithm algorithm, CollKind kind, const CostInputs& in, double S) {
  if (!applies(algorithm, kind, in)) return std::numeric_limits<double>::infinity();
  return detail::entry(algorithm).estimate_s(kind, in, S);
}

Algorithm choose_fastest(CollKind kind, const CostInputs& in, double S) {
  // The candidates in table order (ring first); a later one must be strictly faster.
  Algorithm best = Algorithm::Ring;
  bool any = false;
  double best_s = 0;
  for (Algorithm a : kAlgorithms) {
    if (!applies(a, kind, in)) continue;
    const double t = estimate_s(a, kind, in, S);
    if (!any || t < best_s) {
      best = a;
      best_s = t;
      any = true;
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
  if (call.step_costs != nullptr)  // the whole group's row: auto compares algorithms on the group's ring
    if (const StepCost* row = find_step_cost(*call.step_costs, call.kind, call.bytes, layout.p))
      in.step_overhead_s = row->step_overhead_s;
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
