#pragma once
// The fast flow core: exasim's own discrete-event runtime. The execution core (sim/exec/executor.hpp)
// runs the op streams: matching posts into collectives, Send/Recv pairing, waiters, exposed time,
// traces, errors and the order of launches, the same code as under SimGrid. This file is its network
// backend (sim/exec/network_backend.hpp): flows share links by max-min fairness in a FlowNetwork
// (flow_network.hpp), and an EventQueue (internal/event_queue.hpp) holds the timers and the flows' predicted ends.
//
// Time advances one instant at a time: every event of the instant is handed to the core (including
// those it adds at the same time), then what became ready launches together (launch_ready()), then
// the network is re-solved once. Events are compute ends, flow ends and the ends of a collective
// stage's latency term.
//
// A collective stage is a set of bundles (sim/collectives/router.hpp); a bundle is one flow whose route
// is its hops' routes end to end, so that all its hops move at one rate, the slowest hop's, as a
// pipelined ring does (each step waits for the chunk from the previous member). A link crossed by k
// hops of a bundle carries k times its rate. A ring's hops carry 2(p-1)/p*S bytes for an all-reduce,
// (p-1)/p*S for all-gather and reduce-scatter; the stage ends its latency term after its last bundle:
// ring steps x (the slowest ring hop's route latency + the per-step software overhead).
//
// Parallel paths (which global link, which Valiant intermediate) are chosen by flow keys that name the
// flow (sim/collectives/flow_key.hpp), so the SimGrid runtime routes every flow the same way. Adaptive
// routing sees the load at launch, so the core's order of launches is part of the answer; nothing
// else depends on the order in which an instant's events are handled, so answers do not either
// (tested by handling every instant backwards).
//
// LIMITATIONS:
//  - the latency term is paid after the bandwidth phase, not interleaved with it (same total for an
//    isolated collective; under contention the latency neither hides nor worsens bandwidth sharing);
//  - a bundle's hops are rate-locked for the whole stage: a hop that is slow only for a while slows
//    the others for that while (a real ring has chunk buffers that absorb short stalls);
//  - the execution core's limits (sim/exec/executor.hpp): Send/Recv is a rendezvous, compute never
//    slows down because of communication.

#include "sim/exec/stage_router.hpp"
#include "sim/flow/solver.hpp"
#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <functional>

namespace exasim::flow {

/// Where a run stands, for progress displays.
struct Progress {
  double fraction = 0;     ///< ops executed over ops of all ranks, 0..1
  double simulated_s = 0;  ///< simulated time reached
  double wall_s = 0;       ///< wall time since the run started
  bool final = false;      ///< the run has ended (the last report)
};
/// Called at most 4 times a second once a run has taken 2 s of wall time (shorter runs never report),
/// then once with final = true if it was called before.
using ProgressCallback = std::function<void(const Progress&)>;

struct FastOptions {
  Solver solver = Solver::Local;   ///< how the flow network re-solves rates (flow_network.hpp)
  ProgressCallback progress = {};  ///< may be empty; see progress_display()
  /// Handle the events of each instant in reverse order (for tests: answers must not change).
  bool reverse_instants = false;
  /// Stages and bundles of collectives; null: the collectives router (tests inject their own).
  const exec::StageRouter* router = nullptr;
  /// Fill RunResult::link_bytes and link_busy_s (runtime/link_meter.hpp); costs a copy of every route.
  bool meter_links = false;
  /// Leave the down link of mirrored NICs out of the flow network's paths (nic_mirrors.hpp; the same
  /// answers with fewer route entries). Off: for tests and A/B measurements.
  bool mirror_nics = true;
  /// Where run() leaves the flow network's counters at the end (for benchmarks); may be null.
  SolverCounters* counters = nullptr;
};

/// On a terminal, a progress bar with the time left, redrawn in place on stderr and erased at the end;
/// elsewhere (a log, a pipe, CI) a line on stderr every 5 s of a long run, so that it does not look
/// hung. Deterministic outputs are unaffected: it only writes to stderr.
[[nodiscard]] ProgressCallback progress_display();

class FastRuntime final : public runtime::Runtime {
 public:
  FastRuntime(const topo::Topology& topology, FastOptions options) : topology_(topology), options_(options) {}
  [[nodiscard]] std::string name() const override { return "fast"; }
  [[nodiscard]] runtime::RunResult run(const runtime::Job& job, const std::function<bool(runtime::Rank)>& observe,
                                       const runtime::OpObserver& observer) override;

 private:
  const topo::Topology& topology_;
  FastOptions options_;
};

}  // namespace exasim::flow
