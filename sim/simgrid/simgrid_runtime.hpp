#pragma once
// The SimGrid runtime: the engine's op streams executed on SimGrid S4U, as the independent reference
// the fast flow core is checked against (README.md, "How it works": one engine, three runtimes).
//
// The op streams run in the execution core (sim/exec/executor.hpp), the same code as under the fast
// flow core: matching posts into collectives, Send/Recv pairing, waiters, exposed time, traces, errors
// and the order of launches exist once, so the cross-check compares network models. SimGrid is the
// core's network backend (actor_simulation.cpp):
//  - a timer (a rank's compute, a collective stage's latency term) is a sleep;
//  - a flow (a bundle of a collective stage, a Send/Recv transfer) is one SimGrid communication over
//    exactly the route the core chose (sim/collectives/router.hpp): a bundle's route is its hops'
//    routes end to end, so SimGrid's max-min moves all hops at one rate and counts a link crossed by k
//    hops k times, as the fast core's FlowNetwork does;
//  - worker actors carry the timers and communications and call the core when each ends; the core's
//    launch_ready() runs after each such call (SimGrid has no notion of "every event of this instant");
//  - the platform is exasim's topology itself: one SimGrid host per GPU, one SimGrid link per
//    topology link (they are directed), inside a NetZone whose routing is Topology::route(), computed
//    per communication (nothing is tabulated, so thousands of GPUs fit). Every communication runs
//    between the hosts of GPUs 0 and 1 with the route the core chose queued for it: with the route
//    given, CM02 bounds it by its links alone, and the hosts do not matter.
//
// SimGrid settings, and why (reference/simgrid_feasibility.md):
//  - network/model:CM02 with latency and bandwidth factors 1 and weight-S 0: plain max-min sharing of
//    link bandwidth, like flow::FlowNetwork. The default LV08 multiplies latencies by 13 and makes
//    sharing RTT-unfair.
//  - the platform reports route latency 0 to SimGrid. CM02 uses each flow's route latency as its
//    sharing penalty (longer routes get proportionally less bandwidth) and delays the flow's start by
//    it; the fast core does neither and pays latency in the latency term after the bandwidth phase.
//    Charging latency in the runtime, the same way, keeps the two comparable; links still carry their
//    real latency in the platform.
//  - network/crosstraffic:0: no reverse-direction ACK flow at 5% weight on every route.
//  - a large network/TCP-gamma: no per-flow window cap gamma / (2 x latency).
//  - contexts/factory:raw (fastest), contexts/guard-size:0: thousands of actor stacks without
//    exhausting vm.max_map_count; the default 8 MiB stack stays (it is virtual, smaller costs RSS).
//
// Flow keys (which parallel path a flow takes under Minimal/Valiant) are hashed from what the flow
// is: group dimension, group, the group's collective count and ring position (p2p: sender, receiver
// and their count), never from the order in which simultaneous collectives happen to launch, so that
// the choice does not depend on the simulator's tie-breaking (see sim/collectives/flow_key.hpp). The fast
// core keys its flows the same way, so both backends route every flow alike.
//
// LIMITATIONS:
//  - SimGrid keeps one global engine per process that cannot be re-created. By default every run()
//    forks a child that builds the platform, runs and sends the RunResult and the observed ops back
//    through a pipe; the observer is then called in the parent, in the child's order. With
//    SimgridOptions::fork = false the simulation runs in this process, once per process.
//  - Adaptive routing sees as load the number of flows active on each link, as the fast core does, and
//    collectives are launched once per date, after every event of that date (a handler yields before
//    launching; actor_simulation.cpp), so both route with the same loads and agree. Events that the
//    fast core merges into one instant (ends within 1 ns) but SimGrid sees at two dates, or zero-delay
//    timers handled in a later round of the same date, could still split a batch of launches.
//  - wire sizes are whole bytes (SimGrid takes integers): at most one byte per flow differs.
//  - every running timer or flow holds a worker actor (128 KiB stack; idle workers are reused), and
//    each bundle is one communication. SimGrid 3.32 keeps every host-to-host communication in one
//    kernel-wide list and removes it by linear search when it ends (fixed in 3.34), so wall time grows
//    with the number of concurrent flows: bench/simgrid takes 0.3-0.6 s for 14-19k flows at 1,024
//    GPUs and 3-4.5 s for 50-70k flows at 4,096 (2 busy cores), 10-60 times the fast core. It is the
//    reference, not the sweep engine.
//  - same modelling limits as the fast core: latency term after the bandwidth phase, compute never
//    slows down because of communication (both from the execution core).

#include "sim/exec/stage_router.hpp"
#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <memory>

namespace exasim::sg {

struct SimgridOptions {
  /// Run each simulation in a forked child process (see LIMITATIONS). false: in this process, and a
  /// second run() in the same process throws std::logic_error.
  bool fork = true;
  /// Let SimGrid print its informational log (configuration, deadlock reports) to stderr.
  bool verbose = false;
  /// Stages and bundles of collectives; null: the collectives router (tests inject their own).
  const exec::StageRouter* router = nullptr;
  /// Fill RunResult::link_bytes and link_busy_s (runtime/link_meter.hpp).
  bool meter_links = false;
};

/// A runtime named "simgrid" over `topology` (which must outlive it). run() throws
/// std::invalid_argument when the plan needs more GPUs than the machine has, std::logic_error on a
/// deadlock or a plan whose group members post different collectives, std::runtime_error when the
/// forked child dies.
[[nodiscard]] std::unique_ptr<runtime::Runtime> make_simgrid_runtime(const topo::Topology& topology,
                                                                     const SimgridOptions& options);

}  // namespace exasim::sg
