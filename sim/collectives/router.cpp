#include "sim/collectives/router.hpp"

#include "sim/collectives/flow_key.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exasim::collectives {

namespace {

/// Routes the hop src -> dst as hop `position` of `call` onto the end of out.links, reports it, and
/// returns its route latency.
double route_hop(const topo::Topology& topology, const GroupCall& call, Rank src, Rank dst, std::uint32_t position,
                 const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  const std::size_t start = out.links.size();
  topology.route(call.gpu(src), call.gpu(dst),
                 collective_flow_key(call.seed, call.dim, call.group_id, call.sequence, position), load, out.links);
  const std::size_t count = out.links.size() - start;
  if (on_hop) on_hop(out.links.data() + start, count);
  return topology.latency_s(out.links.data() + start, count);
}

/// The ring of today: member k sends to member k+1, in group order, as one bundle.
void route_ring(const topo::Topology& topology, const GroupCall& call, const topo::LinkLoadView* load,
                const OnHop& on_hop, StageRoute& out) {
  const std::uint32_t p = call.size();
  const double wire = schedule::ring_wire_bytes(call.kind, p, call.bytes);
  double hop_latency_s = 0;
  bool rank0_member = false;
  for (std::uint32_t k = 0; k < p; ++k) {
    const Rank src = call.member(k);
    hop_latency_s = std::max(hop_latency_s, route_hop(topology, call, src, call.member((k + 1) % p), k, load, on_hop, out));
    rank0_member = rank0_member || src == 0;
  }
  out.bundles.push_back({0, static_cast<std::uint32_t>(out.links.size()), wire});
  out.latency_s = schedule::ring_steps(call.kind, p) * (hop_latency_s + call.step_overhead_s);
  if (rank0_member) out.rank0_wire_bytes = wire;
}

}  // namespace

Algorithm resolve_algorithm(Algorithm requested, const topo::Topology& /*topology*/, const GroupCall& /*call*/) {
  if (requested == Algorithm::Ring || requested == Algorithm::Auto) return Algorithm::Ring;
  throw std::logic_error("collective algorithm " + std::string(to_string(requested)) + " is not implemented yet");
}

std::uint32_t stage_count(Algorithm /*resolved*/, const topo::Topology& /*topology*/, const GroupCall& /*call*/) {
  return 1;
}

void route_stage(Algorithm resolved, const topo::Topology& topology, const GroupCall& call, std::uint32_t stage,
                 const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  out.clear();
  if (resolved != Algorithm::Ring || stage != 0)
    throw std::logic_error("route_stage: no stage " + std::to_string(stage) + " for " + std::string(to_string(resolved)));
  route_ring(topology, call, load, on_hop, out);
}

}  // namespace exasim::collectives
