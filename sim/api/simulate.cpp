#include "sim/api/simulate.hpp"

#include "sim/api/layer_sampling.hpp"
#include "sim/core/error.hpp"
#include "sim/flow/fast_runtime.hpp"
#include "sim/report/compute_breakdown.hpp"
#include "sim/report/trace_collector.hpp"
#if EXASIM_HAVE_SIMGRID
#include "sim/simgrid/simgrid_runtime.hpp"
#endif

#include <algorithm>
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

/// Simulates the scenario's layer counts of `sampling` and extrapolates to the model's (see there).
report::Summary simulate_sampled(const scenario::Scenario& s, const LayerSampling& sampling,
                                 const SimulateOptions& options) {
  // What describes one run cannot describe the extrapolated iteration: refuse rather than mislabel.
  if (options.on_trace || options.hottest_links > 0 || options.on_links)
    throw InputError(s.source, "simulation.sample_layers",
                     "layer sampling simulates " + std::to_string(sampling.fewer) + " and " +
                         std::to_string(sampling.more) + " of " + std::to_string(sampling.layers) +
                         " layers, so it gives no traces or link loads of the iteration: leave out --out traces "
                         "and --links, or set simulation.sample_layers to 0");
  struct Sample {
    runtime::RunResult result;
    std::vector<report::KernelClassTime> by_kernel;
  };
  std::unique_ptr<scenario::PreparedJob> last;
  const auto run = [&](std::uint32_t layers) {
    const auto sampled = with_layers(s, layers);
    last = scenario::prepare_job(sampled);
    if (options.adjust_job) options.adjust_job(*last);
    auto runtime = make_runtime(*last->topology, options);
    Sample out{runtime->run(last->job, {}, {}), report::compute_by_kernel(last->plan, last->job.kernel_time_s)};
    return out;
  };
  const Sample fewer = run(sampling.fewer);
  const Sample more = run(sampling.more);
  // make_summary reads only the grid's dimensions from the plan, which the layers do not change.
  auto summary = report::make_summary(s, last->plan, extrapolate(fewer.result, more.result, sampling));
  std::vector<report::KernelClassTime> by_kernel = more.by_kernel;
  for (auto& k : by_kernel) {
    const auto it = std::find_if(fewer.by_kernel.begin(), fewer.by_kernel.end(),
                                 [&](const report::KernelClassTime& f) { return f.kernel_class == k.kernel_class; });
    k.seconds = std::max(0.0, extrapolate(it == fewer.by_kernel.end() ? 0.0 : it->seconds, k.seconds, sampling));
  }
  summary.compute_by_kernel = std::move(by_kernel);
  summary.sampled_layers = report::Summary::SampledLayers{sampling.fewer, sampling.more};
  return summary;
}

}  // namespace

report::Summary simulate(const scenario::Scenario& s, const SimulateOptions& options) {
  check_backend_built(options.backend);
  if (options.check_memory) scenario::check_memory_fits(s);
  if (const auto sampling = layer_sampling(s)) return simulate_sampled(s, *sampling, options);
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
