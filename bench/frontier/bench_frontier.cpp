// bench_frontier [--skip-large] [--only NAME] [--set path=value ...]: simulates the Frontier study's scenarios
// (validate/frontier_study/published.json) with the fast flow core, as `exasim simulate` does, and prints
// one JSON line per case:
//  - throughput cases: predicted and published % of peak, counted as the paper does (Megatron-DeepSpeed's
//    throughput_calculator with the recompute factor, F = 96 B s l h^2 (1 + s/6h + V/16lh), over
//    iteration time x GCDs x 191.5 TFLOP/s; docs/frontier.md section 4), their difference in
//    points and relative to the published figure, MFU (72 instead of 96) and where the time went;
//  - weak-scaling points: predicted efficiency = per-GCD throughput at N GCDs / at the series' first
//    point (the work per GCD is constant: the global batch grows with DP), against the published 100 %
//    (confirmed at the series' largest point only).
// Everything runs in about a minute on 2 cores (the 1T points at 2,048 and 3,072 GCDs take ~10 s each);
// --skip-large leaves out the cases above 1,024 GCDs. --set overrides a scenario field in every case (as
// `exasim simulate --set`), for sensitivity runs; --only keeps the cases whose file name contains NAME.

#include "bench/bench_case.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace exasim;
using bench::breakdown_percent;
using json = nlohmann::ordered_json;

namespace {

constexpr std::uint32_t kLargeGcds = 1024;  // --skip-large leaves out cases above this
using Result = bench::CaseResult;

}  // namespace

int main(int argc, char** argv) {
  const auto args = bench::parse_bench_args(argc, argv, "bench_frontier");
  if (!args) return 2;
  const bool skip_large = args->skip_large;
  const auto& overrides = args->overrides;
  const std::string dir = EXASIM_FRONTIER_DIR;
  const auto loaded = bench::load_published(dir, "bench_frontier");
  if (!loaded) return 2;
  const json& published = *loaded;
  const double peak = published["peak_bf16_flops_per_gcd"].get<double>();
  std::map<std::string, Result> cache;  // a scenario in both lists runs once
  auto wanted = [&](const std::string& file) { return args->wanted(file); };
  auto get = [&](const std::string& file) -> const Result& {
    auto it = cache.find(file);
    if (it == cache.end()) it = cache.emplace(file, bench::run_case(dir + "/" + file, overrides)).first;
    return it->second;
  };
  auto skipped_for_size = [&](const std::string& file) {
    if (!skip_large) return false;
    return scenario::load_scenario(dir + "/" + file, overrides).gpus > kLargeGcds;
  };
  auto emit = [](const json& line) { std::cout << line.dump() << std::endl; };
  json settings = json::array();
  for (const auto& o : overrides) settings.push_back(o);

  for (const auto& c : published["throughput"]) {
    const std::string file = c["scenario"].get<std::string>();
    if (!wanted(file)) continue;
    const double pub = c["percent_of_peak"].get<double>();
    json line = {{"kind", "throughput"},
                 {"case", file},
                 {"overrides", settings},
                 {"percent_definition",
                  "hardware flops, Megatron-DeepSpeed throughput_calculator with recompute "
                  "factor 4 (96 B s l h^2 (1 + s/6h + V/16lh)) / (t * GCDs * " +
                      std::to_string(peak / 1e12).substr(0, 5) + " TFLOP/s)"},
                 {"published_percent_of_peak", pub}};
    if (skipped_for_size(file)) {
      line["skipped"] = "more than 1024 GCDs and --skip-large";
      emit(line);
      continue;
    }
    const auto& r = get(file);
    if (!r.error.empty()) {
      line["error"] = r.error;
      emit(line);
      continue;
    }
    const double pred = r.summary.percent_of_peak;
    line.update({{"gpus", r.summary.gpus},
                 {"predicted_percent_of_peak", pred},
                 {"difference_points", pred - pub},
                 {"relative_difference_pct", 100 * (pred - pub) / pub},
                 {"predicted_tflops_per_gcd", r.summary.tflops_per_gpu},
                 {"published_tflops_per_gcd", c["tflops_per_gcd"]},
                 {"predicted_mfu_percent", r.summary.mfu_percent},
                 {"iteration_time_s", r.summary.iteration_time_s},
                 {"breakdown_percent_of_iteration", breakdown_percent(r.summary)},
                 {"wall_s", r.wall_s}});
    emit(line);
  }

  for (const auto& series : published["weak_scaling"]) {
    const auto& files = series["series"];
    const std::string model = series["model"].get<std::string>();
    const std::uint32_t largest = series["largest_gcds"].get<std::uint32_t>();
    const std::string base_file = files.at(0).get<std::string>();
    const Result* base = nullptr;
    for (const auto& f : files) {
      const std::string file = f.get<std::string>();
      if (!wanted(file)) continue;
      json line = {{"kind", "weak_scaling"},
                   {"series", model},
                   {"case", file},
                   {"base_case", base_file},
                   {"overrides", settings},
                   {"efficiency_definition", "per-GCD throughput at N GCDs / at the base case (same work per GCD)"}};
      if (skipped_for_size(file)) {
        line["skipped"] = "more than 1024 GCDs and --skip-large";
        emit(line);
        continue;
      }
      if (base == nullptr) base = &get(base_file);
      const auto& r = get(file);
      if (!r.error.empty() || !base->error.empty()) {
        line["error"] = r.error.empty() ? "base case: " + base->error : r.error;
        emit(line);
        continue;
      }
      const std::uint32_t gpus = r.summary.gpus;
      const double eff = r.summary.tflops_per_gpu / base->summary.tflops_per_gpu;
      line.update({{"gpus", gpus},
                   {"base_gpus", base->summary.gpus},
                   {"predicted_efficiency", eff},
                   {"published_efficiency", 1.0},
                   {"published_confirmed_at_this_point", gpus == largest},
                   {"predicted_percent_of_peak", r.summary.percent_of_peak},
                   {"iteration_time_s", r.summary.iteration_time_s},
                   {"breakdown_percent_of_iteration", breakdown_percent(r.summary)},
                   {"wall_s", r.wall_s}});
      emit(line);
    }
  }
  return 0;
}
