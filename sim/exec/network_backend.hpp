#pragma once
// What the execution core (executor.hpp) needs from a network model: start flows and timers, and say
// when each ends. The fast flow network (sim/flow/fast_runtime.cpp) and SimGrid
// (sim/simgrid/actor_simulation.cpp) implement it; everything else a runtime does (matching posts into
// collectives, pairing Send/Recv, waiters, exposed time, traces, errors, the order of launches) is the
// core's, so that two runtimes differ only in how they move bytes.
//
// The contract: a backend calls Executor::set_now() and then one of compute_ended() / stage_ended() /
// flow_ended() for each timer or flow that ends, at its end time, and Executor::launch_ready() once the
// events it wants launched together have been handled (the fast network: every event of an instant;
// SimGrid: each event on its own). Calls from the core back into the backend happen only inside those.
//
// LIMITATIONS: a flow is a route and a byte count only (no per-flow rate cap, priority or chunking);
// timers are relative to the current time.

#include "topologies/topology.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace exasim::exec {

/// What a timer ends: a rank's compute (id: the rank) or a collective stage's latency term (id: the
/// collective's instance).
enum class TimerKind : std::uint8_t { Compute, StageLatency };

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  /// Reports the timer `delay_s` after the current time.
  virtual void start_timer(double delay_s, TimerKind kind, std::uint32_t id) = 0;
  /// Starts a flow of `bytes` over `route` (links may repeat: a bundle crossing a link k times loads it
  /// k times) and reports flow_ended(tag) once its last byte has arrived. Releases holds on its links.
  virtual void start_flow(std::span<const topo::LinkId> route, double bytes, std::uint32_t tag) = 0;
  /// The load adaptive routing sees (active flows per link, held links included); may be null.
  [[nodiscard]] virtual const topo::LinkLoadView* load_view() const = 0;
  /// Counts `links` as load until a flow over them starts: the hops of a collective routed so far,
  /// so that the adaptive choice of its next hop sees them.
  virtual void hold(const topo::LinkId* links, std::size_t count) = 0;
};

}  // namespace exasim::exec
