#pragma once
// The one library call from a scenario to its typed Summary: prepare the job (plan, network, kernel
// times, placement), run it on the chosen runtime, summarise. `exasim simulate`, the benches and
// `exasim validate` all go through it; commands to come (tune, sweep, place, report) call it in a loop.
// Text and JSON are views of the result (sim/report/summary_views.hpp).

#include "sim/flow/solver.hpp"
#include "sim/report/summary.hpp"
#include "sim/scenario/prepared_job.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/trace.hpp"

#include <functional>
#include <string>
#include <vector>

namespace exasim::api {

enum class Backend {
  Fast,     ///< exasim's flow core (sim/flow)
  Simgrid,  ///< SimGrid 3.32, the reference (sim/simgrid); optional at build time (EXASIM_WITH_SIMGRID)
};

/// "fast" or "simgrid"; InputError("--backend", ...) on anything else.
[[nodiscard]] Backend parse_backend(const std::string& name);
/// "local", "components" or "reference" (flow/solver.hpp); InputError("--solver", ...) on anything else.
[[nodiscard]] flow::Solver parse_solver(const std::string& name);

struct SimulateOptions {
  Backend backend = Backend::Fast;
  /// Refuse (InputError) a scenario the memory model says does not fit the GPU (`--ignore-memory` off).
  bool check_memory = true;
  /// Fast core only: how flow rates are re-solved (all give the same rates; the others are slower and
  /// serve to check the default).
  flow::Solver solver = flow::Solver::Local;
  /// Fast core only: progress on stderr (a bar on a terminal, else a line every 5 s of a long run).
  bool progress_bar = false;
  /// Called on the prepared job before it runs: what-ifs on kernel times or bytes (exasim validate
  /// scales them as its emulation does).
  std::function<void(scenario::PreparedJob&)> adjust_job;
  /// Ranks whose ops are traced (indexed by rank; shorter than the world: the rest are not).
  std::vector<bool> traced_ranks;
  /// Receives the traced ranks' ops after the run (TraceCollector's order: deterministic), with the
  /// job they ran. Without it nothing is traced.
  std::function<void(const scenario::PreparedJob&, std::vector<trace::TraceRow>)> on_trace;
  /// Meter what every link carried (both backends): the Summary gets `links` with this many hottest
  /// links; 0: not metered.
  std::size_t hottest_links = 0;
  /// With hottest_links > 0: receives the metered run (RunResult::link_bytes, link_busy_s) and the job.
  std::function<void(const scenario::PreparedJob&, const runtime::RunResult&)> on_links;
  /// Layer sampling (simulation.sample_layers): run the K-layer sample in a child process while this
  /// one runs the 2K-layer sample, when this process may use two CPUs or more (sim/core/child_process.hpp). The
  /// answer is the same either way; callers that already run one simulation per CPU (batches over
  /// --jobs) leave it off. adjust_job then runs in the child for the K-layer sample.
  bool concurrent_samples = false;
};

/// Simulates one iteration of `s`. InputError on what the scenario asks and the machine or this build
/// cannot give (memory, nodes, a backend not built in). The Summary's compute_by_kernel is filled.
[[nodiscard]] report::Summary simulate(const scenario::Scenario& s, const SimulateOptions& options = {});

}  // namespace exasim::api
