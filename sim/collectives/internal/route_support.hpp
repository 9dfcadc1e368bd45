#pragma once
// What every algorithm's routing shares: the call's key, routing one hop onto a stage, closing a bundle.
// Internal to sim/collectives (the algorithms' files, algorithms/*.cpp).

#include "sim/collectives/flow_key.hpp"
#include "sim/collectives/router.hpp"

#include <cstdint>

namespace exasim::collectives::detail {

/// The part of `call`'s flow keys its hops share (collective_call_key()).
inline std::uint64_t call_key(const GroupCall& call) {
  return collective_call_key(call.seed, call.dim, call.group_id, call.sequence);
}

/// Routes the hop src -> dst as hop `position` of `call` (whose call_key() is `key`) onto the end of
/// out.links, reports it, and returns its route latency.
inline double route_hop(const topo::Topology& topology, const GroupCall& call, std::uint64_t key, Rank src, Rank dst,
                        std::uint32_t position, const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  const std::size_t start = out.links.size();
  const double latency_s =
      topology.route_with_latency(call.gpu(src), call.gpu(dst), collective_flow_key(key, position), load, out.links);
  if (on_hop) on_hop(out.links.data() + start, out.links.size() - start);
  return latency_s;
}

/// Closes the bundle that started at links[begin] with `bytes` per hop.
inline void end_bundle(StageRoute& out, std::size_t begin, double bytes) {
  out.bundles.push_back(
      {static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(out.links.size() - begin), bytes});
}

}  // namespace exasim::collectives::detail
