// scale_bench: how the fast flow core scales with the GPU count on what users run: a scenario built by
// scenario::parse_scenario + prepare_job (Frontier preset, adaptive routing, gpt-320b, AxoNN 4D with
// OAR/ORS/OAG on), simulated for one iteration.
//
//   scale_bench                          4,096 / 16,384 / 32,768 / 65,536 GCDs, 3 runs each
//   scale_bench --gpus 4096,32768 --repeats 5 --layers 10 --routing minimal
//   scale_bench --gpus 4096 --placement packed,spread,random --routing minimal,valiant,adaptive
//   scale_bench --gpus 4096 --model gpt-80b --grid 8,2,8 --batch 1024 --placement spread
//
// --gpus, --placement and --routing take comma lists: the cases are every combination, in that
// nesting order. Placement and routing are axes because the incremental solver's cost depends on them
// far more than on the GPU count (spread placement ties data-parallel and z rings across
// groups into one large component); --model, --grid and --batch give other shapes.
//
// Every run is a forked child, so the peak RSS of a run (wait4's ru_maxrss) is its own and not the
// high-water mark of an earlier, larger case. One JSON line per run, then one line per case with the
// median of every timing field ("median": true). wall_s covers the simulation only (FastRuntime::run);
// prepare_s is parse_scenario + prepare_job (plan, topology, kernel times, placement). With
// --sample-layers K (layer sampling, an approximation: sim/api/layer_sampling.hpp) the case goes
// through api::simulate, which prepares and runs K and 2K layers: wall_s is then the whole call and
// prepare_s is 0.
//
// Whole runs also print what the max-min solver did (flow::SolverCounters): re-solves, paths filled
// (of which held paths released), the route entries those brought into a region, and flow rate
// changes. These explain the wall time where events/s does not: spread placements cost in proportion
// to the route entries (docs/performance.md).
//
// By default the 4D grid keeps gx = 4, gy = 2, gz = 16 (--grid) and scales gdata with the GPU count
// (gdata = 256 at 32,768); the global batch is 4,096 sequences (--batch), raised to gdata * gz where
// that is larger (65,536: 8,192) so that it stays divisible. Random placement uses seed 1.

#include "sim/api/simulate.hpp"
#include "sim/core/child_process.hpp"
#include "sim/core/error.hpp"
#include "sim/flow/fast_runtime.hpp"
#include "sim/scenario/prepared_job.hpp"
#include "sim/scenario/scenario.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Options {
  std::vector<std::uint32_t> gpus{4096, 16384, 32768, 65536};
  int repeats = 3;
  int layers = 0;  ///< 0: the model preset's (gpt-320b: 100)
  std::vector<std::string> routings{"adaptive"};
  std::vector<std::string> placements{"packed"};
  std::string model = "gpt-320b";
  std::vector<std::uint32_t> grid{4, 2, 16};  ///< gx, gy, gz; gdata = gpus / their product
  std::int64_t batch = 4096;
  exasim::flow::Solver solver = exasim::flow::Solver::Local;
  std::string solver_name = "local";
  int sample_layers = 0;  ///< > 0: layer sampling (simulation.sample_layers), through api::simulate
};

/// One case of the cross product of the list axes.
struct Case {
  std::uint32_t gpus;
  std::string placement;
  std::string routing;
};

nlohmann::json scenario_document(const Case& c, const Options& o) {
  const std::uint32_t gx = o.grid[0], gy = o.grid[1], gz = o.grid[2];
  const std::uint32_t gdata = c.gpus / (gx * gy * gz);
  if (gdata == 0 || std::uint64_t{gdata} * gx * gy * gz != c.gpus)
    throw std::runtime_error("scale_bench: " + std::to_string(c.gpus) + " GPUs is not a multiple of the grid");
  const std::int64_t batch = std::max<std::int64_t>(o.batch, std::int64_t{gdata} * gz);
  nlohmann::json s = {
      {"name", "scale-" + std::to_string(c.gpus)},
      {"machine", "frontier"},
      {"model", o.model},
      {"gpus", c.gpus},
      {"parallel", {{"scheme", "axonn4d"}, {"gx", gx}, {"gy", gy}, {"gz", gz}, {"gdata", gdata}}},
      {"training", {{"global_batch", batch}, {"recompute", "full"}}},
      {"overlap", {{"oar", true}, {"ors", true}, {"oag", true}, {"dp", false}}},
      {"placement", c.placement},
      {"seed", 1},
  };
  return s;
}

/// One run, in the calling (child) process: returns the JSON line without peak_rss_bytes.
nlohmann::ordered_json run_case(const Case& c, const Options& o) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  std::vector<std::string> overrides{"machine.network.routing=" + c.routing};
  if (o.layers > 0) overrides.push_back("model.layers=" + std::to_string(o.layers));
  if (o.sample_layers > 0) overrides.push_back("simulation.sample_layers=" + std::to_string(o.sample_layers));
  const auto scenario = exasim::scenario::parse_scenario(scenario_document(c, o), "scale_bench", overrides);
  double prepare_s = 0;
  exasim::runtime::RunResult result;
  std::optional<exasim::flow::SolverCounters> counters;
  if (o.sample_layers > 0) {
    // Layer sampling prepares and runs two jobs: wall_s is the whole call, what a user waits for.
    exasim::api::SimulateOptions options;
    options.solver = o.solver;
    options.check_memory = false;
    options.concurrent_samples = true;  // as `exasim simulate` runs it
    const auto summary = exasim::api::simulate(scenario, options);
    result.events = summary.events;
    result.flows = summary.flows;
    result.iteration_s = summary.iteration_time_s;
    result.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  } else {
    const auto prepared = exasim::scenario::prepare_job(scenario);
    prepare_s = std::chrono::duration<double>(clock::now() - t0).count();
    exasim::flow::FastOptions fast_options;
    fast_options.solver = o.solver;
    fast_options.counters = &counters.emplace();
    exasim::flow::FastRuntime fast(*prepared->topology, fast_options);
    result = fast.run(prepared->job, {}, {});
  }

  nlohmann::ordered_json line;
  line["gpus"] = c.gpus;
  line["model"] = o.model;
  line["layers"] = scenario.model.layers;
  line["placement"] = c.placement;
  line["routing"] = c.routing;
  line["solver"] = o.solver_name;
  if (o.sample_layers > 0) line["sample_layers"] = o.sample_layers;
  const auto& grid = exasim::scenario::parallel_as<exasim::schedule::Axonn4DConfig>(scenario);
  line["grid"] = {grid.gx, grid.gy, grid.gz, grid.gdata};
  line["global_batch"] = scenario.training.global_batch;
  line["events"] = result.events;
  line["flows"] = result.flows;
  line["wall_s"] = result.wall_s;
  line["prepare_s"] = prepare_s;
  line["events_per_s"] = static_cast<double>(result.events) / result.wall_s;
  line["simulated_iteration_s"] = result.iteration_s;
  if (counters) {
    line["resolves"] = counters->resolves;
    line["paths_filled"] = counters->paths_filled;
    line["paths_released"] = counters->paths_released;
    line["route_entries"] = counters->route_entries;
    line["rate_changes"] = counters->rate_changes;
    line["sleeps"] = counters->sleeps;
    line["wakes"] = counters->wakes;
  }
  return line;
}

/// Runs the case in a child process (sim/core/child_process.hpp) and adds the child's peak RSS: each case's
/// memory is its own, not the largest so far.
nlohmann::ordered_json run_in_child(const Case& c, const Options& o) {
  exasim::ChildProcess child([&] { return run_case(c, o).dump(); });
  nlohmann::ordered_json line;
  try {
    line = nlohmann::ordered_json::parse(child.get());
  } catch (const std::exception& e) {
    line = {{"error", e.what()}};
  }
  line["peak_rss_bytes"] = child.peak_rss_bytes();
  return line;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

std::vector<std::uint32_t> parse_list(const std::string& text) {
  std::vector<std::uint32_t> out;
  for (const auto& item : split(text)) out.push_back(static_cast<std::uint32_t>(std::stoul(item)));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--gpus" && has_value)
      o.gpus = parse_list(argv[++i]);
    else if (arg == "--repeats" && has_value)
      o.repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--layers" && has_value)
      o.layers = std::atoi(argv[++i]);
    else if (arg == "--routing" && has_value)
      o.routings = split(argv[++i]);
    else if (arg == "--placement" && has_value)
      o.placements = split(argv[++i]);
    else if (arg == "--model" && has_value)
      o.model = argv[++i];
    else if (arg == "--grid" && has_value)
      o.grid = parse_list(argv[++i]);
    else if (arg == "--batch" && has_value)
      o.batch = std::atoll(argv[++i]);
    else if (arg == "--sample-layers" && has_value)
      o.sample_layers = std::max(0, std::atoi(argv[++i]));
    else if (arg == "--solver" && has_value) {
      o.solver_name = argv[++i];
      try {
        o.solver = exasim::api::parse_solver(o.solver_name);
      } catch (const exasim::InputError& e) {
        std::cerr << "scale_bench: " << e.what() << "\n";
        return 2;
      }
    } else {
      o.grid.clear();  // the usage below
      break;
    }
  }
  if (o.grid.size() != 3 || o.gpus.empty() || o.routings.empty() || o.placements.empty() ||
      std::find(o.grid.begin(), o.grid.end(), 0u) != o.grid.end()) {
    std::cerr << "usage: scale_bench [--gpus 4096,16384,32768,65536] [--repeats 3] [--layers N]\n"
                 "                   [--placement packed,spread,random] [--routing minimal,valiant,adaptive]\n"
                 "                   [--model gpt-320b] [--grid GX,GY,GZ] [--batch 4096]\n"
                 "                   [--solver local|components|reference] [--sample-layers K]\n";
    return 2;
  }
  std::vector<Case> cases;
  for (std::uint32_t gpus : o.gpus)
    for (const auto& placement : o.placements)
      for (const auto& routing : o.routings) cases.push_back({gpus, placement, routing});
  for (const Case& c : cases) {
    std::vector<nlohmann::ordered_json> runs;
    for (int k = 0; k < o.repeats; ++k) {
      auto line = run_in_child(c, o);
      line["run"] = k;
      std::cout << line.dump() << std::endl;
      if (line.contains("error")) return 1;
      runs.push_back(std::move(line));
    }
    nlohmann::ordered_json summary = runs.front();
    summary.erase("run");
    for (const char* field : {"wall_s", "prepare_s", "events_per_s", "peak_rss_bytes"}) {
      std::vector<double> values;
      for (const auto& r : runs) values.push_back(r[field].get<double>());
      if (std::string(field) == "peak_rss_bytes")
        summary[field] = static_cast<std::int64_t>(median(values));
      else
        summary[field] = median(values);
    }
    summary["median"] = true;
    summary["repeats"] = o.repeats;
    std::cout << summary.dump() << std::endl;
  }
  return 0;
}
