#pragma once
// The fast flow core: exasim's own discrete-event runtime.
//
// Events are compute completions, flow completions and collective completions. A collective starts when
// every member of its group has posted it; a ring collective then becomes one "bundle" flow: its route is
// every member-to-successor hop's route end to end, and all hops move at one rate, the slowest hop's, as
// a pipelined ring does (each step waits for the chunk from the previous member). Each hop carries
// 2(p-1)/p*S bytes for an all-reduce, (p-1)/p*S for all-gather and reduce-scatter. Bundles share links
// with every other flow by max-min fairness, a link crossed by k hops of a bundle carrying k times its
// rate. When the bundle ends, the collective completes after its latency term: ring steps x (the slowest
// ring hop's route latency + the per-step software overhead).
//
// Consecutive kernels of a rank that no observer watches are one queue event (their summed time):
// nothing can happen to a rank between its kernels, since compute never waits for the network. They
// still count one event each in RunResult::events, as on the other runtimes.
//
// Send/Recv (pipeline activations and gradients, plan.hpp): the k-th Send from a to b is matched with the
// k-th Recv at b from a; once both are posted the pair becomes one flow of `bytes` from a to b, and both
// handles complete one route latency (+ the per-step overhead) after its last byte. Unmatched posts wait
// in a queue per (sender, receiver) pair; only pairs that communicate have one, so memory grows with
// pipeline neighbours, not with world size squared.
//
// Parallel paths (which global link, which Valiant intermediate) are chosen by flow keys that name the
// flow (sim/collectives/flow_key.hpp): a ring hop by (dimension, group, the group's collective count, ring
// position), a transfer by (sender, receiver, the pair's transfer count). They do not depend on the
// order in which simultaneous collectives launch, so the SimGrid runtime routes every flow the same way.
// Adaptive routing still sees the load at launch, so the order of launches is part of the answer: the
// collectives and transfers that become ready at one instant start together at its end, ordered by
// first member (sender), kind, dimension, group (receiver) and sequence, each seeing the load of those
// before it. Nothing else depends on the order in which an instant's events are handled, so answers
// do not either (tested by handling every instant backwards).
//
// LIMITATIONS:
//  - the latency term is paid after the bandwidth phase, not interleaved with it (same total for an
//    isolated collective; under contention the latency neither hides nor worsens bandwidth sharing);
//  - ring order is the group's rank order; no trees, no hierarchical or NVLS algorithms, no channels;
//  - a ring's hops are rate-locked for the whole collective: a hop that is slow only for a while slows
//    the others for that while (a real ring has chunk buffers that absorb short stalls);
//  - Send/Recv is a rendezvous: no eager protocol for small messages, no send buffering;
//  - compute never slows down because of communication (no SM/CU or memory-bandwidth contention).

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
  bool full_resolve = false;  ///< re-solve every flow at every event (reference solver, for tests)
  ProgressCallback progress = {};  ///< may be empty; see terminal_progress_bar()
  /// Handle the events of each instant in reverse order (for tests: answers must not change).
  bool reverse_instants = false;
};

/// A progress bar redrawn in place on stderr, or an empty callback when stderr is not a terminal (so
/// logs and pipes stay clean). Deterministic outputs are unaffected: it only writes to stderr.
[[nodiscard]] ProgressCallback terminal_progress_bar();

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
