// bench_validate [--runs N] [--recalibrate] [CASE.json...]: runs exasim validate's loop on every case of
// validate/cases N times (default 3) and prints per case the median measured and simulated iteration
// times and their error, then the mean absolute percentage error (MAPE), as a table and a JSON line.
// Calibration comes from the microbenchmarks only (cached per rank count; --recalibrate refreshes it
// once per rank count at the start). The host's load average before and after is printed with the
// results: on a shared host, other work running beside the suite slows the measured side (and a loaded
// calibration the simulated side), so a table means little without it.

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "validate/mpirun.hpp"
#include "validate/validation.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

using namespace exasim;

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The 1-minute load average (Linux), or -1 where /proc/loadavg is missing.
double load_average() {
  std::ifstream f("/proc/loadavg");
  double load = -1;
  f >> load;
  return f ? load : -1.0;
}
}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  bool recalibrate = false;
  std::vector<std::string> cases;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--recalibrate")
      recalibrate = true;
    else
      cases.push_back(a);
  }
  if (cases.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(EXASIM_CASES_DIR))
      if (e.path().extension() == ".json") cases.push_back(e.path().string());
    std::sort(cases.begin(), cases.end());
  }
  const double load_before = load_average();
  std::ostringstream log;  // mpirun chatter; shown only on failure
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  double sum_abs = 0, worst = 0;
  std::set<std::uint32_t> calibrated;
  std::printf("%-26s %5s %12s %12s %8s %s\n", "case", "ranks", "measured s", "simulated s", "error",
              "runs (measured s)");
  try {
    for (const auto& path : cases) {
      auto s = scenario::load_scenario(path);
      validate::ValidateOptions o;
      o.ranks = s.gpus;
      o.recalibrate = recalibrate && !calibrated.count(s.gpus);
      calibrated.insert(s.gpus);
      std::vector<double> measured, simulated;
      for (int r = 0; r < runs; ++r) {
        auto v = validate::validate_scenario(path, o, log);
        o.recalibrate = false;
        measured.push_back(v.measured_iteration_s);
        simulated.push_back(v.simulated_iteration_s);
      }
      const double m = median(measured), sim = median(simulated);
      const double err = validate::error_pct(m, sim);
      sum_abs += std::abs(err);
      worst = std::max(worst, std::abs(err));
      std::string all;
      for (double t : measured) {
        if (!all.empty()) all += ' ';
        all += std::to_string(t);
      }
      std::printf("%-26s %5u %12.4f %12.4f %+7.1f%% %s\n", s.name.c_str(), s.gpus, m, sim, err, all.c_str());
      std::fflush(stdout);
      rows.push_back({{"case", s.name},
                      {"ranks", s.gpus},
                      {"measured_s", m},
                      {"simulated_s", sim},
                      {"error_pct", err},
                      {"measured_runs_s", measured}});
    }
  } catch (const std::exception& e) {
    std::cerr << log.str() << "bench_validate: error: " << e.what() << "\n";
    return dynamic_cast<const InputError*>(&e) ? 2 : 1;
  }
  const double mape = cases.empty() ? 0 : sum_abs / static_cast<double>(cases.size());
  const double load_after = load_average();
  std::printf("MAPE %.2f%%  worst %.2f%%  (goal: MAPE <= 5%%, no case > 10%%)\n", mape, worst);
  std::printf("load average %.2f before, %.2f after (the suite itself loads the host while it runs)\n", load_before,
              load_after);
  std::cout << nlohmann::ordered_json{{"bench", "validate"},
                                      {"runs", runs},
                                      {"cases", rows},
                                      {"mape_pct", mape},
                                      {"worst_abs_error_pct", worst},
                                      {"load_average_before", load_before},
                                      {"load_average_after", load_after}}
                   .dump()
            << "\n";
  return 0;
}
