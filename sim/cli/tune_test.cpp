// `exasim tune` and `exasim sweep` in-process: outputs, --jobs against one process, bad flags.
#include "sim/cli/cli.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include "sim/cli/test_support.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace {

using exasim::cli::testing::exasim_run;

// 16 A100s of simple-a100, a 2-layer model: 35 grids (16 = 2^4: C(7,3) ordered factorisations). One
// file per test process: ctest runs test cases side by side, and one rewriting a shared file while
// another reads it made the reader fail.
std::string small_scenario() {
  auto path = std::filesystem::temp_directory_path() / ("exasim_tune_test_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"machine": "simple-a100",
    "model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
    "gpus": 16, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
    "training": {"global_batch": 16, "recompute": "full"}, "seed": 3})";
  return path.string();
}

/// The best.json `tune --out dir` wrote simulates to the iteration time tune reported for it (`j`).
void check_best_simulates(const std::filesystem::path& dir, const nlohmann::json& j) {
  const auto sim = exasim_run({"simulate", (dir / "best.json").string(), "--json"});
  REQUIRE(sim.code == 0);
  CHECK(nlohmann::json::parse(sim.out)["iteration_time_s"] == j["best"]["iteration_time_s"]);
}

/// The header and the first row of a CSV file.
std::pair<std::string, std::string> csv_head(const std::filesystem::path& path) {
  std::ifstream csv(path);
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  return {header, first};
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
      {{"tune", s, "--scheme", "pipeline"}, "--scheme: pipeline: must be axonn4d, megatron, fsdp or all"},
      {{"sweep", s, "--vary", "gpus=8", "--tune", "--scheme", "3d"},
       "--scheme: 3d: must be axonn4d, megatron, fsdp or all"},
      {{"sweep", s, "--vary", "gpus=8", "--scheme", "megatron"}, "--scheme: megatron: chooses what --tune searches"},
      // A file where the directory should go: refused before the search.
      {{"tune", s, "--out", s}, "--out: "},
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

TEST_CASE("tune shows MFU beside HFU and says how it ranks, and full recomputation runs more FLOPs than the model's",
          "[integration]") {
  const auto r = exasim_run({"tune", small_scenario(), "--top", "2"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("ranked by simulated iteration time, fastest first"));
  CHECK_THAT(r.out, Catch::Contains("MFU%"));
  const auto j = nlohmann::json::parse(exasim_run({"tune", small_scenario(), "--top", "2", "--json"}).out);
  // recompute full: the GPUs run the forward twice, so the hardware figure exceeds the model's.
  CHECK(j["best"]["mfu_percent"].get<double>() > 0);
  CHECK(j["best"]["percent_of_peak"].get<double>() > j["best"]["mfu_percent"].get<double>());
}

TEST_CASE("tune exits 4 with advice when nothing fits, and writes no output folder", "[integration]") {
  const auto dir = std::filesystem::temp_directory_path() / ("exasim_tune_nofit_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  // 2 layers of hidden 65536: 103 billion parameters, 18 B each: 1.9 TB of state on 16 x 40 GB.
  const auto r = exasim_run(
      {"tune", small_scenario(), "--set", "model.hidden=65536", "--set", "model.heads=64", "--out", dir.string()});
  INFO(r.out << r.err);
  CHECK(r.code == 4);
  CHECK_THAT(r.out, Catch::Contains("nothing fits"));
  CHECK_THAT(r.out, Catch::Contains("hold the state alone"));
  CHECK_THAT(r.err, Catch::Contains("no configuration fits"));
  CHECK_FALSE(std::filesystem::exists(dir / "tune.csv"));
  const auto j =
      exasim_run({"tune", small_scenario(), "--set", "model.hidden=65536", "--set", "model.heads=64", "--json"});
  CHECK(j.code == 4);
  CHECK_THAT(nlohmann::json::parse(j.out)["advice"].get<std::string>(), Catch::Contains("--scheme all"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("tune --place places the best K and ranks them again by their placed time", "[integration]") {
  const auto r = exasim_run({"tune", small_scenario(), "--top", "3", "--place", "2", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["placed"].size() == 2);
  double previous = 0;
  for (const auto& p : j["placed"]) {
    const auto tuned = j["simulated"][p["tune_rank"].get<std::size_t>() - 1];
    CHECK(p["parallel"] == tuned["parallel"]);
    // The packed baseline is the scenario's own placement: place re-simulates tune's time for it.
    CHECK(p["reference"] == "packed");
    CHECK(p["reference_iteration_s"].get<double>() == Approx(tuned["iteration_time_s"].get<double>()));
    CHECK(p["placed_iteration_s"].get<double>() <= p["reference_iteration_s"].get<double>());
    CHECK(p["placed_iteration_s"].get<double>() >= previous);
    previous = p["placed_iteration_s"].get<double>();
  }
  const auto table = exasim_run({"tune", small_scenario(), "--top", "2", "--place", "1"});
  CHECK_THAT(table.out, Catch::Contains("best placed: "));
  const auto bad = exasim_run({"tune", small_scenario(), "--top", "2", "--place", "3"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--place"));
}

TEST_CASE("tune and place take --sample-layers as simulate and sweep do", "[integration]") {
  const auto t = exasim_run(
      {"tune", small_scenario(), "--top", "1", "--set", "model.layers=16", "--sample-layers", "2", "--json"});
  INFO(t.err);
  REQUIRE(t.code == 0);
  const auto j = nlohmann::json::parse(t.out);
  CHECK(j["best"]["sampled_layers"] == nlohmann::json{2, 4});
  const auto bad = exasim_run({"tune", small_scenario(), "--sample-layers", "-3"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("simulation.sample_layers"));
  const auto p = exasim_run({"place", small_scenario(), "--sample-layers", "-3"});
  CHECK(p.code == 2);
  CHECK_THAT(p.err, Catch::Contains("simulation.sample_layers"));
}

TEST_CASE("sweep --sample-layers samples every point whose model is long enough", "[integration]") {
  const auto s = small_scenario();
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"sweep", s, "--vary", "model.layers=4,16", "--json", "--jobs", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = exasim_run(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out)["rows"];
  };
  const auto full = run({}), sampled = run({"--sample-layers", "2"});
  REQUIRE(sampled.size() == 2);
  // 4 layers: 2K covers the model, simulated whole; 16: 2 and 4 layers extrapolated. One switch and
  // identical layers: the same times either way.
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(sampled[i]["iteration_time_s"].get<double>() ==
          Approx(full[i]["iteration_time_s"].get<double>()).epsilon(1e-9));
  CHECK_FALSE(sampled[0].contains("sampled_layers"));
  CHECK(sampled[1]["sampled_layers"] == nlohmann::json{2, 4});
  CHECK_FALSE(full[1].contains("sampled_layers"));
  const auto table = exasim_run({"sweep", s, "--vary", "model.layers=4,16", "--sample-layers", "2"});
  CHECK_THAT(table.out, Catch::Contains("approximate: 1 of 2 points simulated with layer sampling"));
  const auto bad = exasim_run({"sweep", s, "--vary", "model.layers=4,16", "--sample-layers", "-3"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("simulation.sample_layers") != std::string::npos);
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

TEST_CASE("sweep --tune --scheme megatron tunes each point's Megatron layout", "[integration]") {
  const auto r = exasim_run(
      {"sweep", small_scenario(), "--vary", "gpus=8,16", "--tune", "--scheme", "megatron", "--top", "2", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 2);
  for (const auto& row : j["rows"]) {
    CHECK(row["parallel"]["scheme"] == "megatron");
    CHECK(row["parallel"]["tp"].get<int>() * row["parallel"]["pp"].get<int>() * row["parallel"]["dp"].get<int>() ==
          row["point"]["gpus"].get<int>());
  }
}

TEST_CASE("tune --scheme megatron counts every layout, ranks close to the simulation, writes a runnable best.json",
          "[integration]") {
  // Every Megatron layout that fits is simulated (--top above the count): the exhaustive search.
  const auto dir = std::filesystem::temp_directory_path() / "exasim_tune_test_megatron";
  const auto r = exasim_run(
      {"tune", small_scenario(), "--scheme", "megatron", "--top", "100000", "--json", "--out", dir.string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["scheme"] == "megatron");
  // Without CP, (tp, pp) with tp*pp | 16: 15 pairs, 5 with tp = 1 (1 sequence-parallel choice), 10 with
  // tp > 1 (2): 25, of which the 5 with dp = 1 ((1,16) once, (2,8) (4,4) (8,2) (16,1) twice: 9) take ZeRO 0
  // alone and the other 16 all 4 stages: 73. With cp = 2^b (b = 1..4; 2 cp chunks divide seq 512), every
  // (tp, pp) = (2^a, 2^c) with a + c <= n = 4 - b takes 4 ZeRO stages (dp x cp > 1), twice with tp > 1:
  // 4 (n + 1)^2, so 64 + 36 + 16 + 4 = 120. 193 x 5 micro-batches (divisors of 16) x 2 virtual stages
  // (divisors of 2 layers) x 3 recompute modes = 5790 (hand count).
  CHECK(j["configs_considered"] == 5790);
  std::uint64_t refused = 0;
  for (const auto& [reason, n] : j["refused"].items()) refused += n.get<std::uint64_t>();
  CHECK(j["configs_fitting"].get<std::uint64_t>() + refused == 5790);
  // pp = 4, 8, 16 do not divide 2 layers.
  CHECK(j["refused"]["parallel.pp"].get<std::uint64_t>() > 0);
  const auto fitting = j["configs_fitting"].get<std::size_t>();
  REQUIRE(j["simulated"].size() == fitting);
  for (const auto& row : j["simulated"]) {
    CHECK(row["scheme"] == "megatron");
    CHECK(row["parallel"]["scheme"] == "megatron");
    CHECK(row.contains("recompute"));
  }
  // The estimate orders the layouts as the simulation does, and is never far off on this machine (one
  // switch: no contention it leaves out). Measured over the 1,752 that fit: 0.987, 6.2% mean, 26% max.
  CHECK(j["analytic_vs_simulated"]["rank_correlation"].get<double>() > 0.95);
  CHECK(j["analytic_vs_simulated"]["mean_abs_error_percent"].get<double>() < 15);
  CHECK(j["analytic_vs_simulated"]["max_abs_error_percent"].get<double>() < 50);
  // The default --top 16 finds a layout within 2% of the exhaustive best.
  const auto top16 = exasim_run({"tune", small_scenario(), "--scheme", "megatron", "--json"});
  REQUIRE(top16.code == 0);
  const double best = j["best"]["iteration_time_s"].get<double>();
  CHECK(nlohmann::json::parse(top16.out)["best"]["iteration_time_s"].get<double>() <= 1.02 * best);
  // best.json is a Megatron scenario exasim simulate runs to the same time.
  check_best_simulates(dir, j);
  const auto [header, first] = csv_head(dir / "tune.csv");
  CHECK(header.rfind("scheme,gx,gy,gz,gdata,tp,cp,pp,dp,zero,micro_batch,virtual_stages,sequence_parallel,ep,etp,"
                     "shard,replicas,reshard_after_forward,recompute,",
                     0) == 0);
  CHECK(first.rfind("megatron,,,,,", 0) == 0);
}

TEST_CASE("tune --scheme all searches every scheme and ranks them together", "[integration]") {
  const auto s = small_scenario();
  std::map<std::string, nlohmann::json> alone;  // each scheme searched on its own
  for (const char* scheme : {"axonn4d", "megatron", "fsdp"}) {
    const auto r = exasim_run({"tune", s, "--scheme", scheme, "--top", "1", "--json"});
    INFO(scheme << ": " << r.err);
    REQUIRE(r.code == 0);
    alone[scheme] = nlohmann::json::parse(r.out);
  }
  const auto all = exasim_run({"tune", s, "--scheme", "all", "--top", "40", "--json"});
  INFO(all.err);
  REQUIRE(all.code == 0);
  const auto j = nlohmann::json::parse(all.out);
  CHECK(j["scheme"] == "all");
  std::uint64_t considered = 0, fitting = 0;
  for (const auto& [scheme, one] : alone) {
    considered += one["configs_considered"].get<std::uint64_t>();
    fitting += one["configs_fitting"].get<std::uint64_t>();
  }
  CHECK(j["configs_considered"] == considered);
  CHECK(j["configs_fitting"] == fitting);
  // Refusals keep their scheme: "megatron parallel.pp", "axonn4d parallel.gy", ...
  CHECK(j["refused"]["megatron parallel.pp"] == alone["megatron"]["refused"]["parallel.pp"]);
  for (const auto& [reason, n] : j["refused"].items())
    CHECK((reason.rfind("axonn4d ", 0) == 0 || reason.rfind("megatron ", 0) == 0 || reason.rfind("fsdp ", 0) == 0));
  // The 40 best estimates of all, simulated and ranked by simulated time whatever their scheme.
  REQUIRE(j["simulated"].size() == 40);
  std::set<std::string> schemes;
  for (std::size_t i = 0; i < 40; ++i) {
    schemes.insert(j["simulated"][i]["scheme"].get<std::string>());
    if (i > 0) CHECK(j["simulated"][i - 1]["iteration_time_s"] <= j["simulated"][i]["iteration_time_s"]);
  }
  CHECK(schemes.size() >= 2);
  const auto table = exasim_run({"tune", s, "--scheme", "all", "--top", "3"});
  CHECK_THAT(table.out, Catch::Contains("axonn4d, megatron and fsdp"));
  CHECK_THAT(table.out, Catch::Contains("best: "));
}

TEST_CASE("tune --scheme fsdp counts shards x micro-batches x resharding x recompute, writes a runnable best.json",
          "[integration]") {
  const auto dir = std::filesystem::temp_directory_path() / "exasim_tune_test_fsdp";
  const auto r =
      exasim_run({"tune", small_scenario(), "--scheme", "fsdp", "--top", "100000", "--json", "--out", dir.string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["scheme"] == "fsdp");
  // 16 GPUs of 4 a node: shard 4, 8, 16 (whole nodes) x micro-batch 1 (one sequence per GPU) x resharding
  // on, off x 3 recompute modes = 18 (hand count).
  CHECK(j["configs_considered"] == 18);
  REQUIRE(j["simulated"].size() == j["configs_fitting"].get<std::size_t>());
  for (const auto& row : j["simulated"]) CHECK(row["parallel"]["scheme"] == "fsdp");
  // Every rank runs one stream: the replay estimate ranks the configurations as the simulation does.
  CHECK(j["analytic_vs_simulated"]["rank_correlation"].get<double>() > 0.5);
  check_best_simulates(dir, j);
  CHECK(csv_head(dir / "tune.csv").second.rfind("fsdp,,,,,,,,,,1,,,,,", 0) ==
        0);  // its micro_batch in the column Megatron's shares
}
