#pragma once
// Routing a ring collective as one bundle flow, shared by the fast flow core and the SimGrid runtime so
// that both route every hop identically (the cross-check relies on it).
//
// The hops (member k to member k+1 of the group, in the group's rank order) are routed one after
// another with their flow keys (flow_key.hpp) and appended end to end to one route: the bundle's. After
// each hop the caller counts it as load (on_hop), so that an adaptive choice for a later hop of the same
// ring sees the earlier ones, as it would if they were separate flows.
//
// LIMITATIONS: ring order is the group's rank order (no topology-aware ring construction).

#include "sim/runtime/flow_key.hpp"
#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace exasim::runtime {

struct RingBundle {
  double hop_latency_s = 0;    ///< the slowest hop's route latency
  bool rank0_member = false;   ///< rank 0 sends one of the hops (for the rank-0 wire-byte counters)
};

/// Appends the route of every hop of the `sequence`-th collective of group `group_id` along `dim`
/// (whose member 0 is `first`) to `route`, calling on_hop(const LinkId* links, std::size_t count) after
/// each hop. `load` may be null.
template <typename OnHop>
RingBundle route_ring_bundle(const topo::Topology& topology, const Job& job, Rank first, std::uint8_t dim,
                             std::uint32_t group_id, std::uint32_t sequence, const topo::LinkLoadView* load,
                             std::vector<topo::LinkId>& route, OnHop&& on_hop) {
  const auto& grid = job.plan->grid;
  const std::uint32_t p = grid.dim(dim).size;
  RingBundle bundle;
  for (std::uint32_t k = 0; k < p; ++k) {
    const Rank src = grid.group_member(first, dim, k);
    const Rank dst = grid.group_member(first, dim, (k + 1) % p);
    const std::size_t hop_start = route.size();
    topology.route(job.gpu(src), job.gpu(dst), collective_flow_key(job.seed, dim, group_id, sequence, k), load, route);
    const std::size_t hop_links = route.size() - hop_start;
    bundle.hop_latency_s = std::max(bundle.hop_latency_s, topology.latency_s(route.data() + hop_start, hop_links));
    on_hop(route.data() + hop_start, hop_links);
    bundle.rank0_member = bundle.rank0_member || src == 0;
  }
  return bundle;
}

}  // namespace exasim::runtime
