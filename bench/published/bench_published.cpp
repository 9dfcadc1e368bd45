// bench_published [--json] [--skip-large] [--only NAME] [--set path=value ...]: simulates every published,
// measured training run of validate/published/published.json with the fast flow core, as `exasim
// simulate` does, and prints a table: one row per run as it finishes (its primary figure published and
// predicted, the error, the wall time), then per suite the mean and largest |error|. With --json it prints
// one JSON line per run and a summary line instead (scripts/accuracy-table.py turns them into
// docs/accuracy.md's tables):
//  - per run: the published figures (iteration time, TFLOP/s per GPU, MFU, % of peak: whichever the source
//    gives), exasim's prediction of each, their relative error ((predicted - published) / published), the
//    suite's primary figure and its error, where the time went (as bench_frontier), and memory: a run that
//    does not fit per exasim's memory model is simulated anyway and reported with fits_memory false and the
//    reason;
//  - where the source gives TFLOP/s but no time, the iteration time those TFLOP/s imply under exasim's own
//    flop count (published_iteration_time_implied_s), for reading the breakdown against;
//  - per run, an ablation: the iteration built up from compute alone, + exposed collectives, + the pipeline
//    bubble, + compute slowed beside communication, each with its error against the published time;
//  - summary: per suite, the runs simulated and the mean absolute (and signed) and the largest absolute
//    relative error of the primary figure; the runs listed as not expressible.
// Nothing is fitted: the figures are the sources' own. --skip-large leaves out runs above 4,096 GPUs (the
// Llama 3 runs at 8,192 and 16,384 GPUs take tens of seconds each); --set overrides a scenario field in every
// run (sensitivities); --only keeps the runs whose name contains NAME.

#include "bench/bench_case.hpp"
#include "sim/report/summary_views.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace exasim;
using json = nlohmann::ordered_json;

namespace {

constexpr std::uint32_t kLargeGpus = 4096;  // --skip-large leaves out runs above this

/// Published figure -> the Summary field that predicts it. Figures not listed (hfu_percent) are printed
/// but not compared: their definition is not exasim's.
const std::map<std::string, double report::Summary::*>& predicted_field() {
  static const std::map<std::string, double report::Summary::*> m = {
      {"iteration_time_s", &report::Summary::iteration_time_s},
      {"hardware_tflops_per_gpu", &report::Summary::tflops_per_gpu},
      {"hardware_percent_of_peak", &report::Summary::percent_of_peak},
      {"model_tflops_per_gpu", &report::Summary::model_tflops_per_gpu},
      {"mfu_percent", &report::Summary::mfu_percent}};
  return m;
}

struct SuiteTally {
  std::size_t runs = 0, simulated = 0;
  double sum_abs = 0, sum_signed = 0, max_abs = 0;
  json not_fitting = json::array(), failed = json::array(), skipped = json::array();
};

/// The iteration built up term by term from the run's own breakdown (means over ranks, which add up to
/// the iteration): compute alone (kernels at their unslowed rates); + exposed collectives (every
/// dimension but the pipeline's); + the pipeline (exposed send/recv and the idle tail: the bubble);
/// + compute slowed beside communication. Each step as a time and its error against the published
/// time (given, or implied by the published throughput), so a reader sees which term moves the answer.
json ablation_json(const report::Summary& s, double published_time_s) {
  const double compute = s.compute_s - s.compute_slowed_s;
  double collectives = 0, pipeline = s.idle_s;
  for (const auto& d : s.dimensions) (d.name == "pp" ? pipeline : collectives) += d.exposed_comm_s;
  json out = json::array();
  double t = 0;
  auto step = [&](const char* name, double seconds) {
    t += seconds;
    json e = {{"step", name}, {"time_s", t}};
    if (published_time_s > 0) e["error_pct"] = 100 * (t - published_time_s) / published_time_s;
    out.push_back(e);
  };
  step("compute alone", compute);
  step("+ collectives", collectives);
  step("+ pipeline bubble", pipeline);
  step("+ interference", s.compute_slowed_s);
  return out;
}

json memory_json(const bench::CaseResult& r) {
  const auto& s = r.summary;
  const auto& m = s.memory;
  json breakdown = {{"weights", m.weights / 1e9},
                    {"gradients", m.gradients / 1e9},
                    {"optimizer", m.optimizer / 1e9},
                    {"activations", m.activations / 1e9},
                    {"workspace", m.workspace / 1e9}};
  json out = {{"fits_memory", r.memory_error.empty()},
              {"per_gpu_gb", m.total() / 1e9},
              {"capacity_gb", s.memory_capacity_bytes / 1e9},
              {"breakdown_gb", breakdown}};
  if (!r.memory_error.empty()) out["why"] = r.memory_error;
  return out;
}

/// The table's header: what each column of print_row holds.
void print_header() {
  std::printf("%-34s %6s %-24s %11s %11s %8s %7s\n", "run", "GPUs", "figure", "published", "exasim", "error", "wall_s");
}

/// One run's row (a skipped or failed run: why), or the suites' summary.
void print_row(const json& line) {
  if (line["kind"] == "summary") {
    std::printf("\n%-20s %5s %16s %11s %19s\n", "suite", "runs", "mean |error| %", "mean error %", "largest |error| %");
    for (const auto& [suite, t] : line["suites"].items()) {
      if (!t.contains("mean_abs_relative_error_pct")) {
        std::printf("%-20s %5d %16s\n", suite.c_str(), t["simulated"].get<int>(), "-");
        continue;
      }
      std::printf("%-20s %5d %16.1f %+11.1f %19.1f\n", suite.c_str(), t["simulated"].get<int>(),
                  t["mean_abs_relative_error_pct"].get<double>(), t["mean_relative_error_pct"].get<double>(),
                  t["max_abs_relative_error_pct"].get<double>());
    }
    for (const auto& n : line["not_expressible"])
      std::printf("not expressible: %s\n", n["run"].get<std::string>().c_str());
    std::printf("wall %.1f s\n", line["wall_s"].get<double>());
    return;
  }
  const auto run = line["run"].get<std::string>();
  if (!line.contains("primary_relative_error_pct")) {
    const auto why = line.contains("skipped") ? "skipped: " + line["skipped"].get<std::string>()
                                              : "error: " + line.value("error", std::string("?"));
    std::printf("%-34s %s\n", run.c_str(), why.c_str());
    std::fflush(stdout);
    return;
  }
  const auto primary = line["primary"].get<std::string>();
  const bool fits = line["memory"]["fits_memory"].get<bool>();
  std::printf("%-34s %6u %-24s %11.4g %11.4g %+7.1f%% %7.1f%s\n", run.c_str(), line["gpus"].get<unsigned>(),
              primary.c_str(), line["published"][primary].get<double>(), line["predicted"][primary].get<double>(),
              line["primary_relative_error_pct"].get<double>(), line["wall_s"].get<double>(),
              fits ? "" : "  (over memory)");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  // --json is this bench's own flag; the rest are the shared ones.
  bool as_json = false;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::string(argv[i]) == "--json")
      as_json = true;
    else
      rest.push_back(argv[i]);
  }
  const auto args = bench::parse_bench_args(static_cast<int>(rest.size()), rest.data(), "bench_published");
  if (!args) return 2;
  const std::string dir = EXASIM_PUBLISHED_DIR;
  const auto loaded = bench::load_published(dir, "bench_published");
  if (!loaded) return 2;
  const json& published = *loaded;
  json settings = json::array();
  for (const auto& o : args->overrides) settings.push_back(o);
  auto emit = [as_json](const json& line) {
    if (as_json)
      std::cout << line.dump() << std::endl;
    else
      print_row(line);
  };
  if (!as_json) print_header();

  std::map<std::string, SuiteTally> tally;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& run : published["runs"]) {
    const std::string name = run["name"].get<std::string>();
    if (!args->wanted(name)) continue;
    const std::string suite = run["suite"].get<std::string>();
    const std::string primary = published["suites"][suite]["primary"].get<std::string>();
    const std::string file = dir + "/" + run["scenario"].get<std::string>();
    auto& t = tally[suite];
    ++t.runs;
    json line = {{"kind", "run"},         {"suite", suite},
                 {"run", name},           {"scenario", run["scenario"]},
                 {"overrides", settings}, {"published", run["published"]},
                 {"primary", primary}};
    if (run.contains("approximation")) line["approximation"] = run["approximation"];
    if (args->skip_large) {
      std::uint32_t gpus = 0;
      try {
        gpus = scenario::load_scenario(file, args->overrides).gpus;
      } catch (const std::exception&) {
        // reported by run_case below
      }
      if (gpus > kLargeGpus) {
        line["skipped"] = "more than " + std::to_string(kLargeGpus) + " GPUs and --skip-large";
        t.skipped.push_back(name);
        emit(line);
        continue;
      }
    }
    const auto r = bench::run_case(file, args->overrides, /*run_when_memory_fails=*/true);
    if (!r.error.empty()) {
      line["error"] = r.error;
      t.failed.push_back(name);
      emit(line);
      continue;
    }
    const auto& s = r.summary;
    json predicted = json::object(), error = json::object();
    for (const auto& [figure, field] : predicted_field()) {
      predicted[figure] = s.*field;
      if (run["published"].contains(figure)) {
        const double pub = run["published"][figure].get<double>();
        error[figure] = 100 * (s.*field - pub) / pub;
      }
    }
    line.update({{"gpus", s.gpus},
                 {"machine", s.machine},
                 {"model", s.model},
                 {"parallel", report::parallel_json(s)},
                 {"predicted", predicted},
                 {"relative_error_pct", error}});
    if (!error.contains(primary)) {
      line["error"] = "published.json: the run has no '" + primary + "', its suite's primary figure";
      t.failed.push_back(name);
      emit(line);
      continue;
    }
    const double e = error[primary].get<double>();
    line["primary_relative_error_pct"] = e;
    ++t.simulated;
    t.sum_abs += std::fabs(e);
    t.sum_signed += e;
    // The iteration time the published TFLOP/s imply under exasim's flop count (same count as the paper
    // for Megatron's formula; an estimate where the source's count is not stated).
    const auto& pub = run["published"];
    const double gpus = s.gpus;
    if (!pub.contains("iteration_time_s")) {
      if (pub.contains("hardware_tflops_per_gpu"))
        line["published_iteration_time_implied_s"] =
            s.hardware_flops / (pub["hardware_tflops_per_gpu"].get<double>() * 1e12 * gpus);
      else if (pub.contains("model_tflops_per_gpu"))
        line["published_iteration_time_implied_s"] =
            s.model_flops / (pub["model_tflops_per_gpu"].get<double>() * 1e12 * gpus);
    }
    const double published_time_s = pub.contains("iteration_time_s") ? pub["iteration_time_s"].get<double>()
                                    : line.contains("published_iteration_time_implied_s")
                                        ? line["published_iteration_time_implied_s"].get<double>()
                                        : 0.0;
    line["ablation"] = ablation_json(s, published_time_s);
    t.max_abs = std::max(t.max_abs, std::fabs(e));
    line.update({{"breakdown_percent_of_iteration", bench::breakdown_percent(s)},
                 {"memory", memory_json(r)},
                 {"wall_s", r.wall_s}});
    if (!r.memory_error.empty()) t.not_fitting.push_back(name);
    emit(line);
  }

  json suites = json::object();
  for (const auto& [suite, t] : tally) {
    json entry = {{"runs", t.runs}, {"simulated", t.simulated}, {"primary", published["suites"][suite]["primary"]}};
    if (t.simulated > 0) {
      entry["mean_abs_relative_error_pct"] = t.sum_abs / static_cast<double>(t.simulated);
      entry["mean_relative_error_pct"] = t.sum_signed / static_cast<double>(t.simulated);
      entry["max_abs_relative_error_pct"] = t.max_abs;
    }
    entry.update({{"not_fitting_memory", t.not_fitting}, {"failed", t.failed}, {"skipped", t.skipped}});
    suites[suite] = entry;
  }
  json not_expressible = json::array();
  for (const auto& n : published["not_expressible"])
    if (args->wanted(n["name"].get<std::string>())) not_expressible.push_back({{"run", n["name"]}, {"why", n["why"]}});
  emit({{"kind", "summary"},
        {"overrides", settings},
        {"suites", suites},
        {"not_expressible", not_expressible},
        {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}});
  return 0;
}
