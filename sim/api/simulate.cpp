#include "sim/api/simulate.hpp"

#include "sim/core/error.hpp"
#include "sim/flow/fast_runtime.hpp"
#include "sim/report/compute_breakdown.hpp"
#include "sim/report/trace_collector.hpp"
#if EXASIM_HAVE_SIMGRID
#include "sim/simgrid/simgrid_runtime.hpp"
#endif

#include <memory>

namespace exasim::api {

Backend parse_backend(const std::string& name) {
  if (name == "fast") return Backend::Fast;
  if (name == "simgrid") return Backend::Simgrid;
  throw InputError("--backend", name, "unknown backend (allowed: fast, simgrid)");
}

flow::Solver parse_solver(const std::string& name) {
  if (name == "local") return flow::Solver::Local;
  if (name == "components") return flow::Solver::Components;
  if (name == "reference") return flow::Solver::Reference;
  throw InputError("--solver", name, "unknown solver (allowed: local, components, reference)");
}

namespace {

/// Refuses a backend this build lacks before any work is done (the scenario may be large).
void check_backend_built(Backend backend) {
#if EXASIM_HAVE_SIMGRID
  (void)backend;
#else
  if (backend == Backend::Simgrid)
    throw InputError("--backend", "simgrid",
                     "this exasim was built without SimGrid (configured with EXASIM_WITH_SIMGRID=OFF or SimGrid not "
                     "found); use --backend fast, or rebuild with libsimgrid-dev installed");
#endif
}

std::unique_ptr<runtime::Runtime> make_runtime(const topo::Topology& topology, const SimulateOptions& options) {
#if EXASIM_HAVE_SIMGRID
  if (options.backend == Backend::Simgrid) {
    sg::SimgridOptions simgrid;
    simgrid.meter_links = options.hottest_links > 0;
    return sg::make_simgrid_runtime(topology, simgrid);
  }
#endif  // without SimGrid, check_backend_built has refused it
  flow::FastOptions fast;
  fast.solver = options.solver;
  fast.meter_links = options.hottest_links > 0;
  if (options.progress_bar) fast.progress = flow::progress_display();  // stderr: a bar, or a line every 5 s
  return std::make_unique<flow::FastRuntime>(topology, fast);
}

}  // namespace

report::Summary simulate(const scenario::Scenario& s, const SimulateOptions& options) {
  check_backend_built(options.backend);
  if (options.check_memory) scenario::check_memory_fits(s);
  auto prepared = scenario::prepare_job(s);
  if (options.adjust_job) options.adjust_job(*prepared);
  auto runtime = make_runtime(*prepared->topology, options);

  report::TraceCollector collector(prepared->plan);
  const auto& traced = options.traced_ranks;
  auto observe = [&](runtime::Rank r) { return r < traced.size() && traced[r]; };
  runtime::OpObserver observer;
  if (options.on_trace) observer = collector.observer();
  const auto result = runtime->run(prepared->job, observe, observer);

  auto summary = report::make_summary(s, prepared->plan, result);
  summary.compute_by_kernel = report::compute_by_kernel(prepared->plan, prepared->job.kernel_time_s);
  if (options.hottest_links > 0) {
    summary.links = report::link_report(*prepared->topology, result, options.hottest_links);
    if (options.on_links) options.on_links(*prepared, result);
  }
  if (options.on_trace) options.on_trace(*prepared, collector.rows());
  return summary;
}

}  // namespace exasim::api
