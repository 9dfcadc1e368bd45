// `exasim tune` and `exasim sweep` in-process: outputs, --jobs against one process, bad flags.
#include "sim/cli/cli.hpp"

#include <catch2/catch.hpp>
#include "sim/cli/test_support.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using exasim::cli::testing::exasim_run;

// 16 A100s of simple-a100, a 2-layer model: 35 grids (16 = 2^4: C(7,3) ordered factorisations).
std::string small_scenario() {
  auto path = std::filesystem::temp_directory_path() / "exasim_tune_test.json";
  std::ofstream(path) << R"({"machine": "simple-a100",
    "model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
    "gpus": 16, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
    "training": {"global_batch": 16, "recompute": "full"}, "seed": 3})";
  return path.string();
}

}  // namespace

TEST_CASE("tune --json counts every grid, simulates the top K and ranks them by simulated time", "[integration]") {
  const auto r = exasim_run({"tune", small_scenario(), "--top", "4", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["configs_considered"] == 35);
  std::uint64_t refused = 0;
  for (const auto& [reason, n] : j["refused"].items()) refused += n.get<std::uint64_t>();
  CHECK(j["configs_fitting"].get<std::uint64_t>() + refused == 35);
  REQUIRE(j["simulated"].size() == 4);
  for (std::size_t i = 1; i < 4; ++i)
    CHECK(j["simulated"][i - 1]["iteration_time_s"] <= j["simulated"][i]["iteration_time_s"]);
  CHECK(j["best"] == j["simulated"][0]);
  for (const char* key : {"parallel", "analytic_iteration_s", "iteration_time_s", "percent_of_peak", "tflops_per_gpu",
                          "memory_per_gpu_bytes"})
    CHECK(j["best"].contains(key));
  CHECK(j["best"]["parallel"]["scheme"] == "axonn4d");
  CHECK(j["analytic_vs_simulated"]["configs"] == 4);
  CHECK(j["analytic_configs_per_s"].get<double>() > 0);
}

TEST_CASE("tune gives the same rows with --jobs 3 as in one process, and --out writes a runnable best.json",
          "[integration]") {
  const auto one = exasim_run({"tune", small_scenario(), "--top", "5", "--json"});
  const auto dir = std::filesystem::temp_directory_path() / "exasim_tune_test_out";
  const auto three =
      exasim_run({"tune", small_scenario(), "--top", "5", "--json", "--jobs", "3", "--out", dir.string()});
  REQUIRE(one.code == 0);
  REQUIRE(three.code == 0);
  const auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(three.out);
  CHECK(a["simulated"].dump() == b["simulated"].dump());
  const auto sim = exasim_run({"simulate", (dir / "best.json").string(), "--json"});
  REQUIRE(sim.code == 0);
  CHECK(nlohmann::json::parse(sim.out)["iteration_time_s"] == a["best"]["iteration_time_s"]);
  std::ifstream csv(dir / "tune.csv");
  std::string header;
  std::getline(csv, header);
  CHECK(header.rfind("gx,gy,gz,gdata,analytic_iteration_s", 0) == 0);
}

TEST_CASE("tune prints a ranked table and the analytic stage's accuracy", "[integration]") {
  const auto r = exasim_run({"tune", small_scenario(), "--top", "3"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("grids: 35 considered"));
  CHECK_THAT(r.out, Catch::Contains("rank correlation"));
  CHECK_THAT(r.out, Catch::Contains("best: gx="));
  CHECK_THAT(r.err, Catch::Contains("configs/s"));
}

TEST_CASE("tune and sweep refuse bad flags with exit 2, naming the flag and what is allowed", "[unit]") {
  const auto s = small_scenario();
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"tune", s, "--top", "0"}, "--top: 0: must be a number of grids to simulate from 1 to 100000"},
      {{"tune", s, "--jobs", "0"}, "--jobs: 0: must be a number of local processes from 1 to 4096"},
      {{"tune", s, "--top", "-1"}, "--top: -1: must be a number of grids to simulate from 1 to 100000"},
      {{"sweep", s, "--vary", "gpus=8", "--ranks", "-2"}, "--ranks: -2: must be a number of MPI ranks from 1 to 65536"},
      {{"tune", s, "--jobs", "2", "--ranks", "2"}, "--ranks: 2: give --jobs or --ranks, not both"},
      {{"tune", s, "--scheme", "megatron"}, "--scheme: megatron: tune searches axonn4d only"},
      {{"sweep", s, "--vary", "gpus="}, "--vary: gpus=: has an empty value"},
      {{"sweep", s, "--vary", "gpus=8,,16"}, "--vary: gpus=8,,16: has an empty value"},
      {{"sweep", s, "--vary", "=8"}, "--vary: =8: expected KEY=V1,V2,..."},
      {{"sweep", s, "--vary", "gpus=8", "--vary", "gpus=16"}, "varies gpus twice"},
      {{"sweep", s, "--vary", "flavour=1,2"}, "--vary: {\"flavour\":1}"},
      {{"sweep", s, "--zip", "--vary", "gpus=8,16", "--vary", "model.layers=1"},
       "--zip: model.layers: has 1 values but gpus has 2"},
  };
  for (const auto& c : cases) {
    const auto r = exasim_run(c.args);
    INFO(c.args[0] << " " << c.args[2] << ": " << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.message));
  }
}

TEST_CASE("sweep simulates the cartesian product, or the zipped lists, in a stable order", "[integration]") {
  const auto s = small_scenario();
  const auto r =
      exasim_run({"sweep", s, "--vary", "model.layers=1,2", "--vary", "training.global_batch=16,32", "--csv"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::istringstream lines(r.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].rfind("model.layers,training.global_batch,parallel,iteration_time_s", 0) == 0);
  CHECK(rows[1].rfind("1,16,", 0) == 0);
  CHECK(rows[2].rfind("1,32,", 0) == 0);
  CHECK(rows[4].rfind("2,32,", 0) == 0);
  const auto zipped = exasim_run({"sweep", s, "--zip", "--vary", "model.layers=1,2", "--vary",
                                  "training.global_batch=16,32", "--json", "--jobs", "2"});
  REQUIRE(zipped.code == 0);
  const auto j = nlohmann::json::parse(zipped.out);
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][1]["point"]["model.layers"] == 2);
  CHECK(j["rows"][1]["point"]["training.global_batch"] == 32);
}

TEST_CASE("sweep --tune over GPUs tunes each point and reports scaling efficiency", "[integration]") {
  // The scenario's 2x2x2x2 grid cannot run on 8 GPUs: --tune finds one that does.
  const auto r =
      exasim_run({"sweep", small_scenario(), "--vary", "gpus=8,16", "--tune", "--top", "2", "--json", "--jobs", "2"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 2);
  // The first point is the reference: 100% by definition.
  CHECK(j["rows"][0]["scaling_efficiency_percent"] == Approx(100));
  CHECK(j["rows"][1]["parallel"]["scheme"] == "axonn4d");
  CHECK(j["rows"][1]["scaling_efficiency_percent"].get<double>() > 0);
}
