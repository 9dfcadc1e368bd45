#include "sim/api/simulate.hpp"

#include "sim/api/layer_sampling.hpp"
#include "sim/core/child_process.hpp"
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

/// One sampled run: what extrapolate() and the summary need of it.
struct Sample {
  runtime::RunResult result;
  std::vector<report::KernelClassTime> by_kernel;
};

/// A Sample as JSON, to cross from a child process (ChildProcess: CBOR, doubles exact). Link loads are
/// left out: a sampled run meters none.
nlohmann::json to_json(const Sample& sample) {
  const runtime::RunResult& r = sample.result;
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& t : r.ranks) ranks.push_back({t.finish_s, t.compute_s, t.exposed_s, t.slowed_s});
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : sample.by_kernel) kernels.push_back({k.kernel_class, k.seconds});
  return {{"backend", r.backend},
          {"iteration_s", r.iteration_s},
          {"ranks", std::move(ranks)},
          {"rank0_wire_bytes", r.rank0_wire_bytes},
          {"rank0_collectives", r.rank0_collectives},
          {"events", r.events},
          {"flows", r.flows},
          {"wall_s", r.wall_s},
          {"by_kernel", std::move(kernels)}};
}

Sample sample_from_json(const nlohmann::json& j) {
  Sample sample;
  runtime::RunResult& r = sample.result;
  r.backend = j.at("backend");
  r.iteration_s = j.at("iteration_s");
  for (const auto& t : j.at("ranks"))
    r.ranks.push_back({t.at(0), t.at(1), t.at(2).get<std::vector<double>>(), t.at(3)});
  r.rank0_wire_bytes = j.at("rank0_wire_bytes").get<std::vector<double>>();
  r.rank0_collectives = j.at("rank0_collectives").get<std::vector<std::uint64_t>>();
  r.events = j.at("events");
  r.flows = j.at("flows");
  r.wall_s = j.at("wall_s");
  for (const auto& k : j.at("by_kernel")) sample.by_kernel.push_back({k.at(0), k.at(1)});
  return sample;
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
  std::unique_ptr<scenario::PreparedJob> last;
  const auto run = [&](std::uint32_t layers, const SimulateOptions& with) {
    const auto sampled = with_layers(s, layers);
    last = scenario::prepare_job(sampled);
    if (with.adjust_job) with.adjust_job(*last);
    auto runtime = make_runtime(*last->topology, with);
    Sample out{runtime->run(last->job, {}, {}), report::compute_by_kernel(last->plan, last->job.kernel_time_s)};
    return out;
  };
  Sample fewer, more;
  const bool at_once = options.concurrent_samples && available_cpus() >= 2;
  if (at_once) {
    // The shorter sample in a child, without a progress bar of its own: the 2K-layer one shows the way.
    SimulateOptions quiet = options;
    quiet.progress_bar = false;
    ChildProcess child([&] {
      const auto cbor = nlohmann::json::to_cbor(to_json(run(sampling.fewer, quiet)));
      return std::string(cbor.begin(), cbor.end());
    });
    more = run(sampling.more, options);
    fewer = sample_from_json(nlohmann::json::from_cbor(child.get()));
  } else {
    fewer = run(sampling.fewer, options);
    more = run(sampling.more, options);
  }
  // make_summary reads only the grid's dimensions from the plan, which the layers do not change.
  runtime::RunResult both = extrapolate(fewer.result, more.result, sampling);
  // Run at once, the samples took the longer one's wall time, not the sum (which `simulate` printed as
  // "in 26.4 s of wall time" after 18 s).
  if (at_once) both.wall_s = std::max(fewer.result.wall_s, more.result.wall_s);
  auto summary = report::make_summary(s, last->plan, both);
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
    std::vector<std::pair<std::size_t, std::string>> exchanges;  // dimensions whose traffic is all-to-all
    const auto all_to_all = schedule::all_to_all_dims(prepared->plan);
    for (std::size_t d = 0; d < all_to_all.size(); ++d)
      if (all_to_all[d]) exchanges.emplace_back(d, prepared->plan.grid.dim(d).name);
    summary.links = report::link_report(*prepared->topology, result, options.hottest_links, exchanges);
    if (options.on_links) options.on_links(*prepared, result);
  }
  if (options.on_trace) options.on_trace(*prepared, collector.rows());
  return summary;
}

}  // namespace exasim::api
