// direct: every member exchanges S/p with every other member at once, the all-to-all pattern
// (algorithm.hpp, docs/collectives.md section 8). All-gather and reduce-scatter are one such stage;
// all-reduce is two, a direct reduce-scatter then a direct all-gather; an all-to-all is one, each pair
// carrying its own volume (all_to_all_pair_bytes).
#include "sim/collectives/internal/registry.hpp"
#include "sim/collectives/internal/route_support.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exasim::collectives {

std::uint32_t direct_stage_count(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce: return 2;
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AllToAll:
    case CollKind::AllToAllReverse: return 1;
    default: throw std::logic_error("direct: no stages for " + std::string(schedule::to_string(kind)));
  }
}

double direct_wire_bytes(CollKind kind, std::uint32_t p, double S) {
  return p <= 1 ? 0 : direct_stage_count(kind) * (static_cast<double>(p - 1) / p * S);
}

std::uint32_t direct_steps(CollKind kind, std::uint32_t p) { return p > 1 ? direct_stage_count(kind) : 0; }

namespace detail {

namespace {

/// One stage: member i sends S/p (an all-to-all: its pair's bytes) to members i+1, i+2, ... (mod p),
/// each pair its own one-hop bundle.
void route(const topo::Topology& topology, const GroupCall& call, std::uint32_t stage, const topo::LinkLoadView* load,
           const OnHop& on_hop, StageRoute& out) {
  const std::uint32_t p = call.size();
  if (p < 2) return;
  const bool all_to_all = schedule::is_all_to_all(call.kind);
  const double share = call.bytes / p;
  const std::uint64_t key = call_key(call);
  double hop_latency_s = 0;
  std::uint32_t index = 0;
  for (std::uint32_t i = 0; i < p; ++i) {
    for (std::uint32_t d = 1; d < p; ++d) {
      const std::uint32_t j = (i + d) % p;
      const double bytes =
          all_to_all ? schedule::all_to_all_pair_bytes(call.kind, p, call.bytes, call.shares, i, j) : share;
      if (!(bytes > 0)) continue;  // a rank whose experts take no copy (all dropped): nothing to send
      const std::size_t begin = out.links.size();
      const std::uint32_t position = hop_position(PositionTag::Direct, stage, index++);
      hop_latency_s = std::max(
          hop_latency_s, route_hop(topology, call, key, call.member(i), call.member(j), position, load, on_hop, out));
      end_bundle(out, begin, bytes);
    }
  }
  out.latency_s = hop_latency_s + call.step_overhead_s;  // one step
  if (const std::int64_t k = rank0_member(call); k >= 0)
    out.rank0_wire_bytes = all_to_all ? schedule::all_to_all_wire_bytes(call.kind, p, call.bytes, call.shares,
                                                                        static_cast<std::uint32_t>(k))
                                      : static_cast<double>(p - 1) * share;
}

/// Its bytes and steps on the dimension's ring bandwidth and step latency.
AnalyticCost analytic_cost(CollKind kind, std::uint32_t p, double S, const AnalyticLink& link) {
  return {direct_wire_bytes(kind, p, S) / link.bandwidth_Bps, direct_steps(kind, p) * link.step_latency_s};
}

}  // namespace

const AlgorithmEntry& direct_algorithm() {
  static const AlgorithmEntry entry{
      "direct",
      [](const topo::Topology&, const GroupCall& call) {
        return schedule::is_p2p(call.kind) || call.size() < 2 ? Algorithm::Ring : Algorithm::Direct;
      },
      // Not one of auto's candidates: its all-pairs load on the NICs is beyond the two sampled hops.
      /*applies=*/nullptr,
      /*estimate_s=*/nullptr,
      [](CollKind kind, const CostInputs& in, double S) {
        return ClosedForm{direct_wire_bytes(kind, in.p, S), direct_steps(kind, in.p)};
      },
      analytic_cost, [](const GroupCall& call) { return direct_stage_count(call.kind); }, route,
      /*joins_any_members=*/true,
      /*bundles_are_cycles=*/false,
      /*may_split_by_node=*/false,
      /*emulated_by=*/Algorithm::Direct,
      /*stage_ring=*/nullptr};
  return entry;
}

}  // namespace detail

}  // namespace exasim::collectives
