#include "fuzz/fuzz_targets.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/gpu/device_loader.hpp"
#include "sim/place/place.hpp"
#include "sim/scenario/machine.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedule/model.hpp"
#include "topologies/network.hpp"
#include "traces/trace.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace exasim::fuzz {

namespace {

constexpr const char* kSource = "fuzz-input.json";

/// A small valid scenario the `set` target overrides (the same shape as configs/scenarios/).
constexpr const char* kBaseScenario = R"({"machine": "simple-a100",
  "model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
  "gpus": 16, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
  "training": {"global_batch": 16, "recompute": "full"}, "seed": 3})";

/// The CSV loaders read named files: the input goes to a file of this process's own.
std::string write_temp_file(std::string_view data, const char* suffix) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("exasim-fuzz-" + std::to_string(static_cast<long>(::getpid())) + suffix);
  std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
  return path.string();
}

/// What a command does after loading: the topology for the job, the memory check.
void use_scenario(const scenario::Scenario& s) {
  (void)scenario::memory_per_gpu(s);
  scenario::check_memory_fits(s);
  (void)scenario::build_topology(s.machine, s.gpus, s.seed);
}

void fuzz_scenario(std::string_view data) {
  use_scenario(scenario::parse_scenario(parse_json_text(std::string(data), kSource, ""), kSource));
}

void fuzz_machine(std::string_view data) {
  const auto doc = parse_json_text(std::string(data), kSource, "");
  const auto machine = scenario::load_machine_spec(JsonView(doc, kSource, ""));
  // The whole machine, as `exasim topo` builds it (no job: every node of a sized network).
  (void)topo::build_network(machine.node, JsonView(machine.network, machine.network_source, machine.network_path), {});
}

void fuzz_model(std::string_view data) {
  const auto doc = parse_json_text(std::string(data), kSource, "");
  (void)schedule::load_model_spec(JsonView(doc, kSource, "")).parameters();
}

/// One `--set` override per line, on a valid scenario.
void fuzz_set(std::string_view data) {
  std::vector<std::string> overrides;
  for (std::size_t start = 0; start <= data.size();) {
    const auto end = std::min(data.find('\n', start), data.size());
    overrides.emplace_back(data.substr(start, end - start));
    start = end + 1;
  }
  use_scenario(scenario::parse_scenario(nlohmann::json::parse(kBaseScenario), "fuzz-base.json", overrides));
}

void fuzz_calibration_csv(std::string_view data) {
  const nlohmann::json machine = {{"gpu", {{"device", "a100-40gb"}, {"calibration", write_temp_file(data, ".csv")}}}};
  (void)gpu::make_gpu_model(gpu::load_gpu_choice(JsonView(machine, kSource, ""), "gpu"));
}

void fuzz_trace_csv(std::string_view data) { (void)trace::read_csv(write_temp_file(data, ".trace.csv")); }

/// An allocation (`exasim place --nodes`) on the small scenario's machine, built once.
void fuzz_node_list(std::string_view data) {
  static const auto topology = [] {
    const auto s = scenario::parse_scenario(nlohmann::json::parse(kBaseScenario), kSource);
    return scenario::build_topology(s.machine, s.gpus, s.seed);
  }();
  (void)place::read_allocation(write_temp_file(data, ".nodes.txt"), *topology, 1);
}

struct Target {
  std::string name;
  void (*run)(std::string_view);
};

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"scenario", fuzz_scenario},
      {"machine", fuzz_machine},
      {"model", fuzz_model},
      {"set", fuzz_set},
      {"calibration_csv", fuzz_calibration_csv},
      {"trace_csv", fuzz_trace_csv},
      {"node_list", fuzz_node_list},
  };
  return all;
}

}  // namespace

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& t : targets()) out.push_back(t.name);
    return out;
  }();
  return names;
}

void run_target(std::string_view name, std::string_view data) {
  for (const auto& t : targets()) {
    if (t.name != name) continue;
    try {
      t.run(data);
    } catch (const InputError&) {
      // the expected answer to bad input
    }
    return;
  }
  throw std::invalid_argument("no fuzz target named " + std::string(name));
}

}  // namespace exasim::fuzz
