#include "sim/collectives/router.hpp"

#include "sim/collectives/internal/registry.hpp"
#include "sim/core/hash.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

namespace exasim::collectives {

namespace detail {

std::int64_t rank0_member(const GroupCall& call) {
  for (std::uint32_t k = 0; k < call.size(); ++k)
    if (call.member(k) == 0) return k;
  return -1;
}

}  // namespace detail

Algorithm resolve_algorithm(Algorithm requested, const topo::Topology& topology, const GroupCall& call) {
  // No ring, tree or NCCL collective algorithm runs an all-to-all: direct exchanges (NCCL's grouped
  // send/recv), or the hierarchical exchange where it is asked for.
  if (schedule::is_all_to_all(call.kind))
    requested = requested == Algorithm::Hierarchical ? Algorithm::Hierarchical : Algorithm::Direct;
  return detail::entry(requested).resolve(topology, call);
}

std::uint32_t stage_count(Algorithm resolved, const topo::Topology& /*topology*/, const GroupCall& call) {
  const auto& algorithm = detail::entry(resolved);
  if (algorithm.stage_count == nullptr)
    throw std::logic_error("stage_count: resolve the algorithm first (" + std::string(algorithm.name) + ")");
  return algorithm.stage_count(call);
}

AnalyticCost analytic_cost(Algorithm requested, CollKind kind, std::uint32_t p, double S, const AnalyticLink& link) {
  if (schedule::is_all_to_all(kind)) requested = Algorithm::Direct;
  // Every algorithm resolves a Send/Recv to the ring's one transfer (its entry's resolve): cost it so.
  if (schedule::is_p2p(kind)) requested = Algorithm::Ring;
  return detail::entry(requested).analytic_cost(kind, p, S, link);
}

StageRing stage_ring(Algorithm resolved, const topo::Topology& topology, const GroupCall& call, std::uint32_t stage) {
  const auto& algorithm = detail::entry(resolved);
  if (algorithm.stage_ring == nullptr) return StageRing{call.kind, 0, call.bytes};
  return algorithm.stage_ring(topology, call, stage);
}

namespace {

void route_whole_stage(Algorithm resolved, const topo::Topology& topology, const GroupCall& call, std::uint32_t stage,
                       const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  out.clear();
  if (stage >= stage_count(resolved, topology, call))
    throw std::logic_error("route_stage: no stage " + std::to_string(stage) + " for " +
                           std::string(to_string(resolved)));
  detail::entry(resolved).route_stage(topology, call, stage, load, on_hop, out);
}

}  // namespace

void route_stage(Algorithm resolved, const topo::Topology& topology, const GroupCall& given, std::uint32_t stage,
                 const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  // A calibrated row is the cost of a step of the ring it was measured on: take the one of the ring
  // this stage runs (a hierarchical collective's 2-member intra-node ring is not its group's 8).
  // Copied only on machines with rows: elsewhere every stage pays the machine's overhead.
  const bool has_rows = given.step_costs != nullptr && !given.step_costs->empty();
  std::optional<GroupCall> with_row;
  double bandwidth_scale = 1;
  if (has_rows) {
    const StageRing ring = stage_ring(resolved, topology, given, stage);
    if (const StepCost* row = find_step_cost(*given.step_costs, ring.kind, ring.bytes, ring.members)) {
      with_row.emplace(given);
      with_row->step_overhead_s = row->step_overhead_s;
      bandwidth_scale = row->bandwidth_scale;
    }
  }
  const GroupCall& call = with_row ? *with_row : given;
  const std::uint32_t parts = topology.route_parts();
  if (parts <= 1) {
    route_whole_stage(resolved, topology, call, stage, load, on_hop, out);
    out.bandwidth_scale = bandwidth_scale;
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
  out.bandwidth_scale = bandwidth_scale;
}

}  // namespace exasim::collectives
