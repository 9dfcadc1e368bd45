#pragma once
// One simulation on SimGrid's engine in this process: platform, the execution core (sim/exec) over
// SimGrid as its network backend, run, result.
// SimGrid's engine is global and cannot be re-created, so this runs at most once per process
// (simgrid_runtime.cpp forks a child for each run). No SimGrid type in this header.

#include "sim/exec/stage_router.hpp"
#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace exasim::sg {

using runtime::ObservedOp;  ///< recorded in the child, replayed into the caller's OpObserver

/// Runs `job` on `topology`, collectives routed by `router`. Ops of ranks for which `observe` is true are appended to
/// `observed`, in the order an OpObserver would have been called. Throws std::logic_error if called twice in one
/// process, on a deadlock or on mismatched group posts. `wall_s` of the result is left 0. `meter_links`:
/// fill the result's link_bytes and link_busy_s (runtime/link_meter.hpp).
[[nodiscard]] runtime::RunResult simulate_in_this_process(const topo::Topology& topology, const runtime::Job& job,
                                                          const std::function<bool(runtime::Rank)>& observe,
                                                          std::vector<ObservedOp>& observed, bool verbose,
                                                          const exec::StageRouter& router = exec::default_router(),
                                                          bool meter_links = false);

}  // namespace exasim::sg
