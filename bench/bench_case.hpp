#pragma once
// What the benches that compare exasim with published runs (bench_frontier, bench_published) share:
// their command line (--skip-large, --only NAME, --set path=value), running one scenario file with the
// fast flow core through the library call `exasim simulate` makes (sim/api), and the breakdown of an
// iteration in % of its time.
// Header-only: each bench is one translation unit.

#include "sim/api/simulate.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/report/summary.hpp"
#include "sim/scenario/scenario.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace exasim::bench {

struct BenchArgs {
  bool skip_large = false;
  std::string only;                    ///< keep the cases whose name contains this
  std::vector<std::string> overrides;  ///< --set, applied to every case

  [[nodiscard]] bool wanted(const std::string& name) const {
    return only.empty() || name.find(only) != std::string::npos;
  }
};

/// Parses --skip-large, --only NAME, --set path=value; prints the usage line and returns nothing on
/// anything else.
inline std::optional<BenchArgs> parse_bench_args(int argc, char** argv, const char* program) {
  BenchArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--skip-large") {
      args.skip_large = true;
    } else if (a == "--only" && i + 1 < argc) {
      args.only = argv[++i];
    } else if (a == "--set" && i + 1 < argc) {
      args.overrides.emplace_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--json] [--skip-large] [--only NAME] [--set path=value ...]\n", program);
      return std::nullopt;
    }
  }
  return args;
}

/// Reads `<dir>/published.json` (key order kept, for the printed lines); prints why and returns nothing
/// when it cannot.
inline std::optional<nlohmann::ordered_json> load_published(const std::string& dir, const char* program) {
  try {
    return nlohmann::ordered_json::parse(read_json_file(dir + "/published.json").dump());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return std::nullopt;
  }
}

struct CaseResult {
  report::Summary summary;   ///< of the run; meaningless when `error` is set
  double wall_s = 0;         ///< wall-clock time of the simulation itself
  std::string error;         ///< why the case did not run (input)
  std::string memory_error;  ///< why it does not fit the GPU's memory (empty: it fits)
};

/// Loads `path` with `overrides` and simulates it with the fast core. A case that does not fit in memory
/// per exasim's model is refused (`error`) unless `run_when_memory_fails`; then it is simulated anyway and
/// `memory_error` says why it does not fit.
inline CaseResult run_case(const std::string& path, const std::vector<std::string>& overrides,
                           bool run_when_memory_fails = false) {
  CaseResult r;
  try {
    auto s = scenario::load_scenario(path, overrides);
    try {
      scenario::check_memory_fits(s);
    } catch (const std::exception& e) {
      if (!run_when_memory_fails) throw;
      r.memory_error = e.what();
    }
    api::SimulateOptions options;
    options.check_memory = false;  // checked above
    r.summary = api::simulate(s, options);
    r.wall_s = r.summary.wall_s;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

/// Where the iteration went, in % of it (mean over ranks): compute, exposed communication per
/// dimension, idle.
inline nlohmann::ordered_json breakdown_percent(const report::Summary& summary) {
  const double t = summary.iteration_time_s;
  nlohmann::ordered_json out = {{"compute", 100 * summary.compute_s / t}};
  for (const auto& d : summary.dimensions) out["exposed_" + d.name] = 100 * d.exposed_comm_s / t;
  out["idle"] = 100 * summary.idle_s / t;
  return out;
}

}  // namespace exasim::bench
