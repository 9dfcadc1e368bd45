// bench_collectives [--table] [--only NAME]: every published single-collective measurement of
// validate/collectives/published_busbw.json, simulated alone on its machine with the fast flow core
// under collectives.algorithm nccl (held to rings where the measurement ran NCCL_ALGO=Ring) and ring. Prints one JSON
// line per point and message size (published, predicted under each algorithm, relative errors, NCCL's choice), then a
// summary line: per algorithm, the scored sizes, the mean and the largest |relative error|, and how many land within 15
// %. With --table, a text table instead of the per-size JSON lines (the summary line stays JSON). The relative error is
// (predicted - published) / published of the figure the source gives: busBw (negative: too slow) or time (negative: too
// fast).

#include "sim/core/error.hpp"
#include "validate/collective_runs.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

using namespace exasim;
using json = nlohmann::ordered_json;

namespace {

struct Tally {
  std::size_t sizes = 0, within_15 = 0;
  double sum_abs = 0, max_abs = 0;
  void add(double error) {
    ++sizes;
    sum_abs += std::abs(error);
    max_abs = std::max(max_abs, std::abs(error));
    within_15 += std::abs(error) <= 0.15;
  }
  [[nodiscard]] json to_json() const {
    return {{"sizes", sizes},
            {"mean_abs_error", sizes ? sum_abs / static_cast<double>(sizes) : 0.0},
            {"max_abs_error", max_abs},
            {"within_15_percent", within_15}};
  }
};

std::string size_text(double bytes) {
  char buf[32];
  if (bytes >= 1 << 30)
    std::snprintf(buf, sizeof buf, "%g GiB", bytes / (1 << 30));
  else if (bytes >= 1 << 20)
    std::snprintf(buf, sizeof buf, "%g MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10)
    std::snprintf(buf, sizeof buf, "%g KiB", bytes / (1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%g B", bytes);
  return buf;
}

int run(int argc, char** argv) {
  bool table = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--table") {
      table = true;
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::cerr << "usage: bench_collectives [--table] [--only NAME]\n";
      return 2;
    }
  }
  const auto points = validate::load_published_collectives(EXASIM_COLLECTIVES_DIR "/published_busbw.json");
  Tally nccl, ring;
  if (table)
    std::printf("%-30s %9s  %-10s %10s %10s %7s %10s %7s  %s\n", "point", "size", "figure", "published", "nccl",
                "error", "ring", "error", "nccl's choice");
  for (const auto& p : points) {
    if (!only.empty() && p.name.find(only) == std::string::npos) continue;
    const auto machine = validate::machine_of(p);
    const bool time_figure = !p.time_us.empty();
    for (std::size_t i = 0; i < p.bytes.size(); ++i) {
      const double published = time_figure ? p.time_us[i] : p.bus_GBps[i];
      auto predict = [&](collectives::Algorithm a) {
        const auto r = validate::simulate_collective(machine, p.gpus, p.kind, p.bytes[i], a, p.algorithm == "ring");
        return std::make_pair(time_figure ? r.time_s * 1e6 : r.bus_Bps / 1e9, r);
      };
      const auto [with_nccl, nccl_run] = predict(collectives::Algorithm::Nccl);
      const auto [with_ring, ring_run] = predict(collectives::Algorithm::Ring);
      const double nccl_error = (with_nccl - published) / published, ring_error = (with_ring - published) / published;
      if (p.scored) {
        nccl.add(nccl_error);
        ring.add(ring_error);
      }
      std::string choice;
      if (nccl_run.choice)
        choice = std::string(collectives::to_string(nccl_run.choice->algo)) + "/" +
                 std::string(collectives::to_string(nccl_run.choice->proto));
      if (table) {
        std::printf("%-30s %9s  %-10s %10.4g %10.4g %+6.1f%% %10.4g %+6.1f%%  %s%s\n", p.name.c_str(),
                    size_text(p.bytes[i]).c_str(), time_figure ? "time us" : "busBw GB/s", published, with_nccl,
                    100 * nccl_error, with_ring, 100 * ring_error, choice.c_str(), p.scored ? "" : " (not scored)");
        continue;
      }
      json line = {{"point", p.name},          {"gpus", p.gpus},
                   {"bytes", p.bytes[i]},      {"figure", time_figure ? "time_us" : "bus_GBps"},
                   {"published", published},   {"nccl", with_nccl},
                   {"nccl_error", nccl_error}, {"ring", with_ring},
                   {"ring_error", ring_error}, {"nccl_choice", choice},
                   {"scored", p.scored}};
      if (!p.note.empty()) line["note"] = p.note;
      std::cout << line.dump() << "\n";
    }
  }
  std::cout << json{{"summary", {{"nccl", nccl.to_json()}, {"ring", ring.to_json()}}}}.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const InputError& e) {
    std::cerr << "bench_collectives: " << e.what() << "\n";
    return 2;
  }
}
