// tune_bench [SCENARIO] [--scheme=axonn4d|megatron|all] [path=value...]: the analytic stage of `exasim tune` (sim/tune)
// on one core, repeated until a second has passed; prints one JSON line with the grids considered, the grids that fit
// and the analytic estimates per second (the search's own clock, as exasim tune reports it, and the whole
// stage's: enumeration, feasibility and memory checks included; and a cold search's, its first round's
// ring routing and Megatron probe replays included). Default: gpt-40b on 1,024 Frontier
// GCDs, global batch 512.

#include "sim/core/error.hpp"
#include "sim/tune/search.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

int main(int argc, char** argv) {
  using namespace exasim;
  std::string path = "configs/scenarios/frontier-gpt-40b-4096.json";
  std::vector<std::string> overrides = {"gpus=1024", "training.global_batch=512",
                                        R"(parallel={"scheme": "axonn4d", "gx": 2, "gy": 4, "gz": 8, "gdata": 16})"};
  std::string scheme = "axonn4d";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--scheme=", 0) == 0)
      scheme = arg.substr(9);
    else if (arg.find('=') == std::string::npos)
      path = arg;
    else
      overrides.push_back(arg);
  }
  const scenario::Scheme* choice = scenario::find_scheme(scheme);  // nullptr: all
  try {
    const auto base = scenario::load_scenario(path, overrides);
    tune::AnalyticModel model(base);
    tune::SearchResult result;
    double estimate_s = 0;
    std::uint64_t estimates = 0, rounds = 0;
    const auto start = std::chrono::steady_clock::now();
    std::chrono::duration<double> elapsed{0};
    double first_round_s = 0, first_setup_s = 0;
    do {
      result = tune::search(base, model, choice);
      if (rounds == 0) {
        first_round_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        first_setup_s = result.ring_setup_wall_s;
      }
      estimate_s += result.analytic_wall_s;
      estimates += result.fitting;
      ++rounds;
      elapsed = std::chrono::steady_clock::now() - start;
    } while (elapsed.count() < 1.0);
    nlohmann::json line = {
        {"scenario", base.name},
        {"gpus", base.gpus},
        {"scheme", scheme},
        {"configs_considered", result.considered},
        {"configs_fitting", result.fitting},
        {"rounds", rounds},
        {"analytic_configs_per_s", static_cast<double>(estimates) / estimate_s},
        {"stage_configs_per_s", static_cast<double>(rounds * result.considered) / elapsed.count()},
        // The first round routes the rings and replays Megatron's probes (memoised after):
        // a cold search's estimates per second, setup included.
        {"first_round_s", first_round_s},
        {"first_round_setup_s", first_setup_s},
        {"cold_configs_per_s", static_cast<double>(result.fitting) / (first_setup_s + result.analytic_wall_s)}};
    std::cout << line.dump() << "\n";
  } catch (const InputError& e) {
    std::cerr << "tune_bench: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
