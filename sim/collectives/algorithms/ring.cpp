// ring: the members in group order form a ring (algorithm.hpp, docs/collectives.md section 2).
#include "sim/collectives/internal/registry.hpp"
#include "sim/collectives/internal/route_support.hpp"

#include <algorithm>

namespace exasim::collectives::detail {

namespace {

double estimate_s(CollKind kind, const CostInputs& in, double S) {
  return ring_steps(kind, in.p) * (max_latency(in) + in.step_overhead_s) +
         ring_wire_bytes(kind, in.p, S) / std::min(in.intra.bandwidth_Bps, in.inter.bandwidth_Bps);
}

/// One bundle: member k sends to member k+1, in group order.
void route(const topo::Topology& topology, const GroupCall& call, std::uint32_t /*stage*/,
           const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  const std::uint32_t p = call.size();
  const double wire = ring_wire_bytes(call.kind, p, call.bytes);
  const std::uint64_t key = call_key(call);
  double hop_latency_s = 0;
  bool has_rank0 = false;
  // Members by their stride (member() divides twice a call: ~1 % of a spread run when it was called here).
  const Rank first = call.member(0);
  const std::uint32_t stride = call.member_stride();
  for (std::uint32_t k = 0; k < p; ++k) {
    const Rank src = first + k * stride, dst = k + 1 == p ? first : src + stride;
    hop_latency_s = std::max(hop_latency_s, route_hop(topology, call, key, src, dst, k, load, on_hop, out));
    has_rank0 = has_rank0 || src == 0;
  }
  end_bundle(out, 0, wire);
  out.latency_s = ring_steps(call.kind, p) * (hop_latency_s + call.step_overhead_s);
  if (has_rank0) out.rank0_wire_bytes = wire;
}

}  // namespace

AnalyticCost ring_analytic_cost(CollKind kind, std::uint32_t p, double S, const AnalyticLink& link) {
  return {ring_wire_bytes(kind, p, S) / link.bandwidth_Bps, ring_steps(kind, p) * link.step_latency_s};
}

const AlgorithmEntry& ring_algorithm() {
  static const AlgorithmEntry entry{"ring",
                                    [](const topo::Topology&, const GroupCall&) { return Algorithm::Ring; },
                                    [](CollKind, const CostInputs&) { return true; },
                                    estimate_s,
                                    [](CollKind kind, const CostInputs& in, double S) {
                                      return ClosedForm{ring_wire_bytes(kind, in.p, S), ring_steps(kind, in.p)};
                                    },
                                    ring_analytic_cost,
                                    [](const GroupCall&) { return 1u; },
                                    route,
                                    /*joins_any_members=*/false,
                                    /*bundles_are_cycles=*/true,
                                    /*may_split_by_node=*/false,
                                    /*emulated_by=*/Algorithm::Ring,
                                    [](const topo::Topology&, const GroupCall& call, std::uint32_t) {
                                      return StageRing{call.kind, call.size(), call.bytes};
                                    }};
  return entry;
}

}  // namespace exasim::collectives::detail
