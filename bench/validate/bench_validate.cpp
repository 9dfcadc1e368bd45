// bench_validate [--runs N] [--recalibrate] [--unpaired] [CASE.json...]: runs exasim validate's loop on every case of
// validate/cases with N emulations each (default 5, as `exasim validate --repeats`) and prints per case
// the median measured and the simulated iteration times, their error with its 95% interval over the
// emulations, the measured spread, the op classes that take more than 10% of the measured iteration
// with their errors, and the members' post skew as a share of it; then the mean absolute percentage
// error (MAPE) of the suite and how many of those classes land within 15%, as a table and a JSON line.
// Calibration comes from the microbenchmarks only (cached per rank count, probed before reuse;
// --recalibrate refreshes it once per rank count at the start). Each emulation is compared with a simulation
// of the host probed just before it, as `exasim validate` does by default; --unpaired simulates each case
// once on the checked calibration (`exasim validate --unpaired`). The host's load average before and after
// is printed with the results: on a shared host, other work running beside the suite slows the measured
// side (and a loaded calibration the simulated side), so a table means little without it.
// Per case it prints the most CPU time the hypervisor took during a kept emulation; a case whose kept
// emulations lost more than 15% (validate::kDisturbedStealPct) even after reruns is too noisy to judge, as
// `exasim validate --max-error-pct` says (exit 5): it is listed, and left out of the MAPE and the classes.

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/op_classes.hpp"
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
/// The 1-minute load average (Linux), or -1 where /proc/loadavg is missing.
double load_average() {
  std::ifstream f("/proc/loadavg");
  double load = -1;
  f >> load;
  return f ? load : -1.0;
}

/// An op class counts for the class check when it takes more than this share of the measured iteration.
constexpr double kClassShare = 0.10;
/// And is within the goal when its error is at most this.
constexpr double kClassGoalPct = 15;

/// "all_reduce.x -21%" for each op class above kClassShare of the iteration, largest first; then the
/// members' measured post skew (traces/op_classes.hpp), summed over dimensions, as a share of the iteration:
/// not an op's time, so not judged, but what the emulation host's jitter put between a group's posts.
std::string big_classes(const validate::ValidationResult& v, int& within, int& counted,
                        std::vector<std::string>& outside) {
  std::vector<const validate::ClassError*> big;
  double skew_s = 0;
  for (const auto& c : v.classes) {
    if (trace::is_post_skew(c.op_class))
      skew_s += c.measured_s;
    else if (c.measured_s > kClassShare * v.measured_iteration_s)
      big.push_back(&c);
  }
  std::sort(big.begin(), big.end(), [](auto* a, auto* b) { return a->measured_s > b->measured_s; });
  std::string text;
  for (const auto* c : big) {
    char item[80];
    std::snprintf(item, sizeof item, "%s%s %+.0f%%", text.empty() ? "" : ", ", c->op_class.c_str(), c->error_pct);
    text += item;
    ++counted;
    if (std::abs(c->error_pct) <= kClassGoalPct)
      ++within;
    else
      outside.push_back(v.scenario + ":" + c->op_class);
  }
  if (v.measured_iteration_s > 0) {
    char skew[48];
    std::snprintf(skew, sizeof skew, "; post skew %.0f%%", 100 * skew_s / v.measured_iteration_s);
    text += skew;
  }
  return text;
}
}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  bool recalibrate = false, paired = true;
  std::vector<std::string> cases;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--recalibrate")
      recalibrate = true;
    else if (a == "--paired")
      paired = true;
    else if (a == "--unpaired")
      paired = false;
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
  std::printf("%-24s %5s %10s %10s %7s %17s %7s %7s  %s\n", "case", "ranks", "measured s", "simulated", "error",
              "95% interval", "spread", "stolen", "classes > 10% of the iteration: error");
  int inside = 0, classes_within = 0, classes_counted = 0;
  std::vector<std::string> classes_outside, too_noisy;
  double disturbed_bound_pct = 0;
  try {
    for (const auto& path : cases) {
      auto s = scenario::load_scenario(path);
      validate::ValidateOptions o;
      o.ranks = s.gpus;
      o.recalibrate = recalibrate && !calibrated.count(s.gpus);
      calibrated.insert(s.gpus);
      o.repeats = static_cast<std::uint32_t>(runs);
      o.paired = paired;
      const auto v = validate::validate_scenario(path, o, log);
      const std::vector<double>& measured = v.measured_runs_s;
      const double m = v.measured_iteration_s, sim = v.simulated_iteration_s;
      const double err = v.error_pct;
      const bool noisy = v.too_noisy();
      disturbed_bound_pct = v.disturbed_bound_pct();
      std::string classes;
      if (noisy) {
        too_noisy.push_back(s.name);
        classes = v.disturbed_kept() > 0 ? "TOO NOISY: kept emulations disturbed, not judged"
                                         : "TOO NOISY: calibration disturbed, not judged";
      } else {
        inside += v.simulated_inside_spread ? 1 : 0;
        sum_abs += std::abs(err);
        worst = std::max(worst, std::abs(err));
        classes = big_classes(v, classes_within, classes_counted, classes_outside);
      }
      char interval[40] = "-";
      if (v.interval.samples >= 2)
        std::snprintf(interval, sizeof interval, "[%+.1f, %+.1f]%%", v.interval.low_pct, v.interval.high_pct);
      const double stolen = v.most_stolen_pct();
      std::printf("%-24s %5u %10.4f %10.4f %+6.1f%% %17s %6.1f%% %6.1f%%  %s\n", s.name.c_str(), s.gpus, m, sim, err,
                  interval, v.measured_spread_pct, stolen, classes.c_str());
      std::fflush(stdout);
      rows.push_back({{"case", s.name},
                      {"ranks", s.gpus},
                      {"measured_s", m},
                      {"simulated_s", sim},
                      {"error_pct", err},
                      {"measured_spread_pct", v.measured_spread_pct},
                      {"simulated_inside_spread", v.simulated_inside_spread},
                      {"error_interval", validate::to_json(v)["error_interval"]},
                      {"calibration_status", v.calibration_status},
                      {"measured_runs_s", measured},
                      {"steal_pct", v.steal_pct},
                      {"too_noisy", noisy},
                      {"op_classes", validate::to_json(v)["op_classes"]}});
    }
  } catch (const std::exception& e) {
    std::cerr << log.str() << "bench_validate: error: " << e.what() << "\n";
    return dynamic_cast<const InputError*>(&e) ? 2 : 1;
  }
  const std::size_t judged = cases.size() - too_noisy.size();
  const double mape = judged == 0 ? 0 : sum_abs / static_cast<double>(judged);
  const double load_after = load_average();
  std::printf(
      "MAPE %.2f%%  worst %.2f%%  (goal: MAPE <= 3%%, no case > 6%%); simulated inside the measured spread "
      "in %d of %zu cases\n",
      mape, worst, inside, judged);
  if (!too_noisy.empty()) {
    std::printf(
        "too noisy to judge (kept emulations or the calibration runs lost more than %.0f%% of the CPU time), left "
        "out:",
        disturbed_bound_pct);
    for (const auto& name : too_noisy) std::printf(" %s", name.c_str());
    std::printf("\n");
  }
  std::printf("op classes above 10%% of their iteration within 15%%: %d of %d", classes_within, classes_counted);
  for (std::size_t i = 0; i < classes_outside.size(); ++i)
    std::printf("%s%s", i == 0 ? " (outside: " : ", ", classes_outside[i].c_str());
  std::printf("%s\n", classes_outside.empty() ? "" : ")");
  std::printf("load average %.2f before, %.2f after (the suite itself loads the host while it runs)\n", load_before,
              load_after);
  std::cout << nlohmann::ordered_json{{"bench", "validate"},
                                      {"runs", runs},
                                      {"paired", paired},
                                      {"cases", rows},
                                      {"mape_pct", mape},
                                      {"too_noisy_cases", too_noisy},
                                      {"worst_abs_error_pct", worst},
                                      {"inside_spread", inside},
                                      {"classes_counted", classes_counted},
                                      {"classes_within_goal", classes_within},
                                      {"classes_outside_goal", classes_outside},
                                      {"load_average_before", load_before},
                                      {"load_average_after", load_after}}
                   .dump()
            << "\n";
  return 0;
}
