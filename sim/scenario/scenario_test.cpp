#include "sim/scenario/scenario.hpp"
#include "sim/collectives/nccl_tuner.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/prepared_job.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace exasim;

namespace {
nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "machine": "simple-a100", "model": "gpt-5b", "gpus": 64,
    "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 8},
    "training": {"global_batch": 512, "recompute": "full"}})");
}
}  // namespace

TEST_CASE("presets are inlined and --set overrides any field", "[unit]") {
  auto s = scenario::parse_scenario(base(), "s.json", {"machine.node.nic_bandwidth_Bps=50e9", "model.layers=12"});
  CHECK(s.machine.name == "simple-a100");
  CHECK(s.machine.node.nic_bandwidth_Bps == 50e9);
  CHECK(s.model.layers == 12);
  CHECK(s.model.hidden == 4096);
  CHECK(s.overlap.oar);
  CHECK_FALSE(s.overlap.dp);
  CHECK(s.resolved["machine"]["node"]["nic_bandwidth_Bps"] == 50e9);
  // A whole preset can be swapped too.
  auto t = scenario::parse_scenario(base(), "s.json", {"model=gpt-10b", "parallel.gy=4", "parallel.gdata=4"});
  CHECK(t.model.hidden == 5120);
}

TEST_CASE("a --set override creates a missing optional section and still rejects a misspelt one", "[unit]") {
  auto s = scenario::parse_scenario(base(), "s.json", {"collectives.algorithm=tree"});
  CHECK(s.collective_algorithm == collectives::Algorithm::Tree);
  CHECK(scenario::parse_scenario(base(), "s.json").collective_algorithm == collectives::Algorithm::Nccl);
  CHECK_THROWS_WITH(scenario::parse_scenario(base(), "s.json", {"colectives.algorithm=tree"}),
                    Catch::Contains("colectives") && Catch::Contains("collectives"));
  CHECK_THROWS_WITH(scenario::parse_scenario(base(), "s.json", {"collectives.algorithm=star"}),
                    Catch::Contains("collectives.algorithm") && Catch::Contains(collectives::algorithm_names()));
  // Every registered algorithm is a choice, by its name.
  for (collectives::Algorithm a : collectives::kAlgorithms)
    CHECK(
        scenario::parse_scenario(base(), "s.json", {"collectives.algorithm=" + std::string(collectives::to_string(a))})
            .collective_algorithm == a);
  CHECK_THROWS_WITH(scenario::parse_scenario(base(), "s.json", {"gpus.count=3"}),
                    Catch::Contains("'gpus' is not an object"));
}

TEST_CASE("errors in a preset's fields name the preset file", "[unit]") {
  CHECK_THROWS_WITH(scenario::parse_scenario(base(), "s.json", {"model.layers=-1"}),
                    Catch::Contains("configs/models/gpt-5b.json: model.layers: must be an integer"));
}

namespace {

/// A fresh folder under the temp dir, removed at the end of the test.
struct TempFolder {
  std::filesystem::path path;
  explicit TempFolder(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
};

/// Runs in another current directory, and comes back.
struct InFolder {
  std::filesystem::path before = std::filesystem::current_path();
  explicit InFolder(const std::filesystem::path& p) { std::filesystem::current_path(p); }
  ~InFolder() { std::filesystem::current_path(before); }
};

const char* kMyMachine = R"({"name": "my-machine", "gpu": {"device": "a100-40gb", "calibration": "cal.csv"},
  "node": {"gpus": 4, "gpu_gpu_bandwidth_Bps": 100e9, "gpu_gpu_latency_s": 1e-6, "nics": 4,
           "nic_bandwidth_Bps": 25e9, "nic_latency_s": 1e-6},
  "network": {"topology": "single_switch"}})";
const char* kMyModel = R"({"name": "m", "layers": 3, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096})";
const char* kScenario = R"({"machine": "my-machine.json", "model": "m.json", "gpus": 16,
  "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
  "training": {"global_batch": 16}})";

std::string error_of(const std::string& path) {
  try {
    (void)scenario::load_scenario(path, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("relative machine, model and calibration paths resolve beside the file that names them", "[unit]") {
  const TempFolder dir("exasim_scenario_paths"), elsewhere("exasim_scenario_paths_cwd");
  dir.write("my-machine.json", kMyMachine);
  dir.write("m.json", kMyModel);
  dir.write("cal.csv", "device,kernel,m,n,k,time_s\na100-40gb,gemm,4096,4096,4096,0.5\n");
  dir.write("scenario.json", kScenario);
  const InFolder cwd(elsewhere.path);

  const auto s = scenario::load_scenario((dir.path / "scenario.json").string(), {});
  CHECK(s.machine.name == "my-machine");
  CHECK(s.machine.source == (dir.path / "my-machine.json").string());
  CHECK(s.model.layers == 3);
  // The calibration table is beside the machine file, not beside the current directory.
  CHECK(s.machine.gpu_choice.calibration_csv == (dir.path / "cal.csv").string());
  REQUIRE(s.machine.gpu_choice.calibration);

  // Beside the scenario wins over the current directory; the current directory still works alone.
  elsewhere.write("m.json", R"({"name": "cwd", "layers": 5, "hidden": 1024, "heads": 16, "seq_len": 512,
                                "vocab": 4096})");
  CHECK(scenario::load_scenario((dir.path / "scenario.json").string(), {}).model.layers == 3);
  elsewhere.write("other.json", R"({"name": "cwd", "layers": 7, "hidden": 1024, "heads": 16, "seq_len": 512,
                                    "vocab": 4096})");
  CHECK(scenario::load_scenario((dir.path / "scenario.json").string(), {"model=other.json"}).model.layers == 7);
  // Preset names still come from the data dir.
  CHECK(scenario::load_scenario((dir.path / "scenario.json").string(), {"model=gpt-5b"}).model.hidden == 4096);
}

TEST_CASE("a missing relative file is an InputError naming the folders tried", "[unit]") {
  const TempFolder dir("exasim_scenario_missing"), elsewhere("exasim_scenario_missing_cwd");
  const InFolder cwd(elsewhere.path);
  auto doc = nlohmann::json::parse(kScenario);
  doc["model"] = "gpt-5b";
  dir.write("scenario.json", doc.dump());  // my-machine.json is nowhere
  const std::string scenario = (dir.path / "scenario.json").string();
  CHECK_THAT(error_of(scenario),
             Catch::Contains(scenario + ": machine: unknown preset 'my-machine.json' (presets: alps") &&
                 Catch::Contains("and no such file (tried " + (dir.path / "my-machine.json").string() +
                                 ", ./my-machine.json, ") &&
                 Catch::Contains("topologies/presets/my-machine.json)"));

  dir.write("my-machine.json", kMyMachine);  // its cal.csv is missing
  CHECK_THAT(
      error_of(scenario),
      Catch::Contains((dir.path / "my-machine.json").string() + ": machine.gpu.calibration") &&
          Catch::Contains("no such file 'cal.csv' (tried " + (dir.path / "cal.csv").string() + ", ./cal.csv, ") &&
          Catch::Contains("/cal.csv)"));

  dir.write("cal.csv", "device,kernel,m,n,k,time_s\na100-40gb,gemm,4096,4096,4096,0.5\n");
  doc["placement"] = {{"policy", "file"}, {"file", "ranks.txt"}};
  dir.write("scenario.json", doc.dump());
  CHECK_THAT(error_of(scenario), Catch::Contains("placement.file: no such file 'ranks.txt' (tried " +
                                                 (dir.path / "ranks.txt").string() + ", ./ranks.txt)"));
  dir.write("ranks.txt", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n");
  CHECK(scenario::load_scenario(scenario, {}).placement.file == (dir.path / "ranks.txt").string());
}

TEST_CASE("machine.collectives.library: every shipped profile by name, the GPU's by default, NVLS on NVSwitch",
          "[unit]") {
  // The loader's choices are collectives::nccl_profiles(): every one loads by name.
  for (const auto& profile : collectives::nccl_profiles()) {
    auto s =
        scenario::parse_scenario(base(), "s.json", {"machine.collectives={\"library\": \"" + profile.name + "\"}"});
    CHECK(s.machine.nccl_profile.name == profile.name);
  }
  CHECK(scenario::parse_scenario(base(), "s.json").machine.nccl_profile.name == "nccl-ampere");  // a100-40gb
  CHECK_THROWS_WITH(
      scenario::parse_scenario(base(), "s.json", {"machine.collectives={\"library\": \"nccl-volta\"}"}),
      Catch::Contains("machine.collectives.library") && Catch::Contains(collectives::nccl_profile_names()));
  // NVLS: a Hopper profile on an NVSwitch node, not on simple-a100's all-to-all links.
  auto dgx = base();
  dgx["machine"] = "dgx-h100-superpod";
  dgx["gpus"] = 64;
  CHECK(scenario::parse_scenario(dgx, "s.json").machine.nccl_profile.nvls);
  CHECK_FALSE(scenario::parse_scenario(base(), "s.json", {"machine.collectives={\"library\": \"nccl-hopper\"}"})
                  .machine.nccl_profile.nvls);
}

TEST_CASE("a machine's group order: posted by default, concurrent on request, nothing else", "[unit]") {
  CHECK(scenario::parse_scenario(base(), "s.json").machine.collectives_in_post_order);
  const auto with = [&](const std::string& order) {
    return scenario::parse_scenario(base(), "s.json", {R"(machine.collectives={"group_order": ")" + order + "\"}"});
  };
  CHECK(with("posted").machine.collectives_in_post_order);
  CHECK_FALSE(with("concurrent").machine.collectives_in_post_order);
  CHECK_FALSE(scenario::prepare_job(with("concurrent"))->job.collectives_in_post_order);
  CHECK_THROWS_WITH(with("fifo"), Catch::Contains("collectives.group_order") && Catch::Contains("'fifo'") &&
                                      Catch::Contains("posted") && Catch::Contains("concurrent"));
}

TEST_CASE("calibrated step costs are read per kind and band, and bad rows name their field", "[unit]") {
  auto s = scenario::parse_scenario(base(), "s.json", {R"(machine.collectives={"step_overhead_s": 1e-6, "step_costs": [
          {"kind": "all_reduce", "up_to_bytes": 1048576, "step_overhead_s": 5e-5, "bandwidth_scale": 0.5},
          {"kind": "all_reduce", "step_overhead_s": 2e-5}]})"});
  REQUIRE(s.machine.step_costs.size() == 2);
  CHECK(s.machine.step_costs[0].bandwidth_scale == 0.5);
  CHECK(std::isinf(s.machine.step_costs[1].up_to_bytes));
  CHECK(s.machine.step_costs[1].bandwidth_scale == 1);
  auto bad = [&](const std::string& rows) {
    return [&, rows] {
      (void)scenario::parse_scenario(base(), "s.json", {R"(machine.collectives={"step_costs": )" + rows + "}"});
    };
  };
  CHECK_THROWS_WITH(bad(R"([{"kind": "send", "step_overhead_s": 0}])")(),
                    Catch::Contains("step_costs[0].kind") && Catch::Contains("all_gather"));
  CHECK_THROWS_WITH(bad(R"([{"kind": "all_reduce", "step_overhead_s": 0, "bandwidth_scale": 100}])")(),
                    Catch::Contains("step_costs[0].bandwidth_scale"));
  CHECK_THROWS_WITH(bad(R"([{"kind": "all_reduce"}])")(), Catch::Contains("step_costs[0].step_overhead_s"));
  CHECK_THROWS_WITH(bad(R"({"kind": "all_reduce"})")(), Catch::Contains("step_costs") && Catch::Contains("array"));
  CHECK_THROWS_WITH(
      bad(R"([{"kind": "all_gather", "step_overhead_s": 0}, {"kind": "all_gather", "step_overhead_s": 1e-6}])")(),
      Catch::Contains("step_costs[1].up_to_bytes") && Catch::Contains("repeats"));
  CHECK_THROWS_WITH(bad(R"([{"kind": "all_gather", "step_overhead_s": 0, "typo": 1}])")(), Catch::Contains("typo"));
  // A row per group size: one of 2 members beside one of any size is no repeat; two of 2 members are.
  const auto sized = scenario::parse_scenario(base(), "s.json", {R"(machine.collectives={"step_costs": [
          {"kind": "all_reduce", "step_overhead_s": 2e-5},
          {"kind": "all_reduce", "members": 2, "step_overhead_s": 5e-5}]})"});
  REQUIRE(sized.machine.step_costs.size() == 2);
  CHECK(sized.machine.step_costs[1].members == 2);
  CHECK_THROWS_WITH(bad(R"([{"kind": "all_reduce", "members": 2, "step_overhead_s": 0},
                            {"kind": "all_reduce", "members": 2, "step_overhead_s": 1e-6}])")(),
                    Catch::Contains("step_costs[1].up_to_bytes") && Catch::Contains("of 2 members"));
  CHECK_THROWS_WITH(bad(R"([{"kind": "all_reduce", "members": 1, "step_overhead_s": 0}])")(),
                    Catch::Contains("step_costs[0].members"));
}
