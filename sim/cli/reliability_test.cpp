// Hostile and odd inputs: each ends in exit 2 with a message naming the file or flag and
// the field, or in a documented success; none crashes, hangs or reports an internal error.
#include "sim/cli/test_support.hpp"
#include "sim/core/json_view.hpp"
#include "sim/report/csv_table.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using namespace exasim::cli::testing;

fs::path temp_path(const std::string& name) { return fs::temp_directory_path() / ("exasim_reliability_" + name); }

/// `name` must be unique to one test case: ctest runs the cases in parallel processes.
std::string write_case_file(const std::string& name, const std::string& text) {
  const auto path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string good_with(const std::string& key, const std::string& raw_json_value) {
  std::string text = kGood;
  return text.insert(text.rfind('}'), ", \"" + key + "\": " + raw_json_value);
}

std::string nested_array(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

/// Runs `exasim ARGS`; checks exit 2, an "exasim: error:" line holding every one of `parts`, and no
/// internal error.
void expect_exit_2(const std::vector<std::string>& args, const std::vector<std::string>& parts) {
  const auto r = exasim_run(args);
  INFO("stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("exasim: error: ") != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  for (const auto& p : parts) CHECK(r.err.find(p) != std::string::npos);
}

}  // namespace

TEST_CASE("JSON nested past the depth limit is refused before it can exhaust the stack", "[unit]") {
  // 100,000 levels overflowed the stack when the value was printed in a message (SIGSEGV).
  const auto path = write_case_file("deep_gpus.json", good_with("gpus_deep", nested_array(100000)));
  expect_exit_2({"simulate", path}, {path, "JSON nested deeper than 64 levels"});
  const auto deep_description =
      write_case_file("deep_description.json", good_with("description", nested_array(100000)));
  expect_exit_2({"simulate", deep_description, "--out", temp_path("deep_out").string()},
                {deep_description, "JSON nested deeper than 64 levels"});
  expect_exit_2({"simulate", write_case_file("ok1.json", kGood), "--set", "gpus=" + nested_array(100)},
                {"--set: gpus: JSON nested deeper than 64 levels"});
  // 63 levels below the root are allowed: the limit counts the root object too.
  CHECK_NOTHROW(exasim::parse_json_text(nested_array(exasim::kMaxJsonDepth), "x.json", ""));
  CHECK_THROWS_WITH(exasim::parse_json_text(nested_array(exasim::kMaxJsonDepth + 1), "x.json", ""),
                    Catch::Contains("x.json: JSON nested deeper than 64"));
}

TEST_CASE("numbers past a double and text that is not UTF-8 exit 2 naming the field", "[unit]") {
  const auto huge = write_case_file("huge_gpus.json", good_with("description", "1e999"));
  expect_exit_2({"simulate", huge}, {huge, "unreadable JSON", "number overflow"});
  const auto ok = write_case_file("ok2.json", kGood);
  expect_exit_2({"simulate", ok, "--set", "gpus=1e999"}, {"--set: gpus: unreadable value", "1e999"});
  expect_exit_2({"simulate", ok, "--set", "gpus=\xff"}, {"--set: gpus: not valid UTF-8 text"});
  expect_exit_2({"simulate", ok, "--set", "name=\xfe", "--json"}, {"--set: name: not valid UTF-8 text"});
  // A bare word is still a string: a preset name, or a value the field's check then refuses.
  expect_exit_2({"simulate", ok, "--set", "gpus=many"}, {"gpus: must be an integer in [1, ", "\"many\""});
}

TEST_CASE("a directory given as a file exits 2 saying so", "[unit]") {
  const auto dir = temp_path("a_directory");
  fs::create_directories(dir);
  expect_exit_2({"simulate", dir.string()}, {dir.string() + ": is a directory, not a JSON file"});
}

TEST_CASE("description must be text", "[unit]") {
  const auto path = write_case_file("description_number.json", good_with("description", "123"));
  expect_exit_2({"simulate", path}, {path + ": description: must be a string (got 123)"});
  expect_exit_2({"simulate", write_case_file("ok3.json", kGood), "--set", "machine.description=[1]"},
                {"simple-a100.json: machine.description: must be a string"});
}

TEST_CASE("a byte order mark and comments are accepted in JSON inputs", "[unit]") {
  // Documented in docs/reliability.md: editors on Windows write the BOM; comments help presets.
  std::string text = "\xEF\xBB\xBF// a comment\n";
  text += kGood;
  text.insert(text.find("\"gpus\""), "/* block comment */ ");
  const auto r = exasim_run({"simulate", write_case_file("bom.json", text), "--json"});
  INFO("stderr: " << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("\"gpus\":16") != std::string::npos);
}

TEST_CASE("physically absurd rates and fractional compute units are refused", "[unit]") {
  const auto ok = write_case_file("ok4.json", kGood);
  expect_exit_2({"simulate", ok, "--set", "machine.node.nic_bandwidth_Bps=1e-300"},
                {"simple-a100.json: machine.node.nic_bandwidth_Bps: must be a number in [1000, 1e+15]"});
  expect_exit_2({"simulate", ok, "--set", R"(machine.gpu={"device": "a100-40gb", "peak_bf16_flops": 1e-300})"},
                {"machine.gpu.peak_bf16_flops: must be a number in [1e+09, 1e+17]"});
  // 0.5 SMs truncated to 0 and divided by it (SIGFPE).
  expect_exit_2({"simulate", ok, "--set", R"(machine.gpu={"device": "a100-40gb", "compute_units": 0.5})"},
                {"machine.gpu.compute_units: must be an integer in [1, 100000] (got 0.5)"});
  expect_exit_2({"simulate", ok, "--set", "machine=frontier", "--set", "machine.network.global_bandwidth_Bps=999"},
                {"frontier.json: machine.network.global_bandwidth_Bps: must be a number in [1000, "});
}

TEST_CASE("more NICs than GPUs names the node's GPU count", "[unit]") {
  expect_exit_2({"simulate", write_case_file("ok5.json", kGood), "--set", "machine.node.gpus=3"},
                {"simple-a100.json: machine.node.nics: 4 NICs on a node of 3 GPUs (node.gpus)", "lower nics"});
}

TEST_CASE("simulate --out is checked before the run and its files are listed", "[unit]") {
  const auto ok = write_case_file("ok6.json", kGood);
  expect_exit_2({"simulate", ok, "--out", ""}, {"--out: needs a directory name (got an empty string)"});
  for (const std::string name : {"trace.csv", "summary.json"}) {
    const auto dir = temp_path("out_taken_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir / name);
    expect_exit_2({"simulate", ok, "--out", dir.string()},
                  {"--out: " + (dir / name).string() + ": is a directory; cannot write the file " + name + " there"});
    CHECK(!fs::exists(dir / "trace.json"));  // refused before anything was written
  }
  const auto dir = temp_path("out_ok");
  fs::remove_all(dir);
  const auto r = exasim_run({"simulate", ok, "--out", dir.string()});
  INFO("stderr: " << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("files written to " + dir.string() + ": trace.csv trace.json summary.json scenario.resolved.json") !=
        std::string::npos);
  std::ifstream in(dir / "summary.json");
  const auto summary = nlohmann::json::parse(in);
  CHECK(summary["files_written"] ==
        nlohmann::json::array({"trace.csv", "trace.json", "summary.json", "scenario.resolved.json"}));
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 4);  // no temporary left behind
}

TEST_CASE("sizes past what runs in bounded time and memory are refused", "[unit]") {
  const auto ok = write_case_file("ok7.json", kGood);
  // 100,000 layers on 64 GPUs crashed (the plan's 16-bit collective handles wrapped round).
  expect_exit_2({"simulate", ok, "--set", "model.layers=100000"},
                {"model.layers: must be an integer in [1, 10000] (got 100000)"});
  // 2^22 GPUs on one switch took minutes with no sign of progress.
  expect_exit_2({"simulate", ok, "--set", "gpus=4194304"}, {ok + ": gpus: must be an integer in [1, 1048576]"});
  // Megatron runs every layer once per micro-batch: 40,000 micro-batches of 48 layers took 35 s, 4.4 GB.
  const auto megatron =
      write_case_file("megatron.json", R"({"machine": "simple-a100", "model": "megatron-22b", "gpus": 8,
      "parallel": {"scheme": "megatron", "tp": 8, "pp": 1, "dp": 1, "micro_batch": 1},
      "training": {"global_batch": 65536}})");
  expect_exit_2({"simulate", megatron, "--ignore-memory"},
                {megatron + ": training.global_batch: 65536 micro-batches x 48 layers = 3145728 layer passes per "
                            "iteration, more than the 2097152"});
  // A single switch of 2^24 nodes ran out of memory (bad_alloc, an internal error).
  expect_exit_2({"topo", "simple-a100", "--set", "network.max_nodes=16777216"},
                {"simple-a100.json: network.max_nodes: the machine would have 67108864 GPUs, more than the 1048576"});
}

TEST_CASE("a run past 2^24 layer passes warns that it is large", "[unit]") {
  const auto ok = write_case_file("ok8.json", kGood);
  const auto small = exasim_run({"simulate", ok});  // 16 GPUs x 2 layers
  CHECK(small.code == 0);
  CHECK(small.err.find("warning") == std::string::npos);
  // 2,048 GPUs x 10,000 layers = 2.048e7 passes > 2^24: warned before the run, which then stops at the
  // memory check (126B parameters do not fit): the warning comes first, without the long run.
  const auto r = exasim_run({"simulate", ok, "--set", "gpus=2048", "--set", "parallel.gdata=256", "--set",
                             "training.global_batch=512", "--set", "model.layers=10000"});
  INFO("stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("exasim: warning: a large run: 2.05e+07 layer passes over all GPUs") != std::string::npos);
  CHECK(r.err.find("expect 41 s or more") != std::string::npos);
}

TEST_CASE("the engine holds the largest model the loader accepts", "[integration]") {
  // 10,000 layers (model.layers' limit) with every overlap on: ORS keeps two reduce-scatters per layer
  // in flight through the backward pass, 20,000 handles of the 65,535 a rank's 16-bit slots hold.
  // Past about 25,000 layers the slots wrapped round and the fast core overflowed a buffer.
  const auto run = [](int layers) {
    auto doc = nlohmann::json::parse(kGood);
    doc["model"]["layers"] = layers;
    doc["overlap"] = {{"oar", true}, {"ors", true}, {"oag", true}, {"dp", true}};
    const auto path = write_case_file("limit_layers.json", doc.dump());
    auto r = exasim_run({"simulate", path, "--json", "--ignore-memory"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto small = run(100), largest = run(10000);
  // Every layer ran: events and time grow about 100-fold (the embedding and optimizer do not).
  CHECK(largest["events"].get<double>() == Approx(100 * small["events"].get<double>()).epsilon(0.02));
  CHECK(largest["iteration_time_s"].get<double>() ==
        Approx(100 * small["iteration_time_s"].get<double>()).epsilon(0.02));
}

TEST_CASE("sweep flags that cannot mean anything are refused, and its points are capped", "[unit]") {
  const auto ok = write_case_file("sweep_flags.json", kGood);
  expect_exit_2({"sweep", ok, "--vary", "gpus=8", "--top", "0"}, {"--top: 0: ", "give --tune too"});
  expect_exit_2({"sweep", ok, "--vary", "gpus=8", "--top", "-5"}, {"--top: -5: "});
  expect_exit_2({"sweep", ok, "--vary", "gpus=8", "--csv", "--json"}, {"--csv: and --json are exclusive"});
  expect_exit_2({"sweep", ok, "--vary", "seed=1,1,1"}, {"--vary: seed=1,1,1: lists 1 twice"});
  std::string values;
  for (int v = 1; v <= 400; ++v) {
    if (v > 1) values += ',';
    values += std::to_string(v);
  }
  // 160,000 points: refused before any is built (it ended in an uncaught std::bad_alloc).
  expect_exit_2({"sweep", ok, "--vary", "seed=" + values, "--vary", "model.layers=" + values},
                {"--vary: model.layers: ", "more than 10000 points"});
  expect_exit_2({"sweep", ok, "--vary", "gpus=8", "--hostfile", temp_path("no_hosts").string()},
                {"--hostfile: ", "give --ranks too"});
}

TEST_CASE("sweep.csv quotes its values: a comma or a quote in one stays in its cell", "[integration]") {
  const auto ok = write_case_file("sweep_csv.json", kGood);
  const auto r = exasim_run({"sweep", ok, "--vary", R"(description="a,b",say "hi")", "--csv"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto path = write_case_file("sweep_csv.csv", r.out);
  const auto table = exasim::report::read_csv_table(path);
  table.require_width();
  REQUIRE(table.rows.size() == 2);
  CHECK(table.cell(0, "description") == R"("a,b")");
  CHECK(table.cell(1, "description") == R"("say \"hi\"")");
}

TEST_CASE("validate, EXASIM_DATA_DIR and the batch worker refuse garbage with exit 2", "[unit]") {
  const auto ok = write_case_file("garbage_ok.json", kGood);
  expect_exit_2({"validate", ok, "--ranks", "2", "--max-error-pct", "nan"},
                {"--max-error-pct: nan: must be a percentage"});
  expect_exit_2({"validate", ok, "--ranks", "2", "--paired", "--unpaired"}, {"--unpaired", "excludes", "--paired"});
  const auto garbage = write_case_file("garbage_batch.json", "[1, 2");
  expect_exit_2({"batch-worker", garbage, "--out", temp_path("garbage_rows").string()}, {garbage, "JSON"});
  const auto not_list = write_case_file("garbage_batch2.json", R"({"a": 1})");
  expect_exit_2({"batch-worker", not_list, "--out", temp_path("garbage_rows").string()},
                {"must be a JSON array of scenario objects"});
  const char* old = std::getenv("EXASIM_DATA_DIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("EXASIM_DATA_DIR", ok.c_str(), 1);
  const auto r = exasim_run({"simulate", ok});
  if (old != nullptr)
    ::setenv("EXASIM_DATA_DIR", saved.c_str(), 1);
  else
    ::unsetenv("EXASIM_DATA_DIR");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("EXASIM_DATA_DIR: " + ok + ": must name exasim's source folder"));
}

TEST_CASE("compare refuses traces of two devices, one trace twice, more ranks than GPUs", "[integration]") {
  const std::string testdata = std::string(EXASIM_TEST_DATA_DIR) + "/traces/testdata/";
  const auto a100 = testdata + "a100-2rank-nccl.json.gz", mi250 = testdata + "mi250-rocm-minitoy.json.gz";
  const auto scenario = std::string(EXASIM_TEST_DATA_DIR) + "/configs/scenarios/a100-2gpu-dp.json";
  expect_exit_2({"compare", a100, mi250, "--scenario", scenario},
                {mi250, "deviceProperties[0].name: the trace ran on"});
  expect_exit_2({"compare", a100, a100, "--scenario", scenario}, {a100 + ": given twice"});
  std::string csv = "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s\n";
  for (int r = 0; r < 16; ++r) csv += std::to_string(r) + ",a,gemm,,1,1,0,1e-3\n";
  const auto trace = write_case_file("compare_16.csv", csv);
  expect_exit_2({"compare", trace, "--scenario", scenario}, {"16 measured ranks, more than the scenario's 2 GPUs"});
}

TEST_CASE("output folders are made only for runs whose inputs load, and refuse devices", "[unit]") {
  const auto bad = write_case_file("outdir_bad.json", "{");
  const auto dir = temp_path("outdir_never_made");
  fs::remove_all(dir);
  expect_exit_2({"tune", bad, "--out", dir.string()}, {bad});
  CHECK(!fs::exists(dir));
  const auto ok = write_case_file("outdir_ok.json", kGood);
  expect_exit_2({"topo", "simple-a100", "--export", "graphml", "/dev/null"},
                {"/dev/null: is a device or special file, not a regular file"});
  (void)ok;
}

TEST_CASE("JSON output of a file name that is not UTF-8 is printed, not an internal error", "[unit]") {
  const auto bad_name = temp_path(std::string("trace_\xff\xfe.csv"));
  std::ofstream(bad_name) << "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s\n0,a,gemm,,1,1,0,1e-3\n";
  const auto r = exasim_run({"trace", "summarize", bad_name.string(), "--json"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.err.find("internal error") == std::string::npos);
}

TEST_CASE("report refuses a group matrix past its cap and a malformed links.csv", "[integration]") {
  const auto dir = temp_path("report_matrix");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto scenario = write_case_file("report_matrix.json", kGood);
  REQUIRE(exasim_run({"simulate", scenario, "--out", (dir / "run").string(), "--links", "3", "-q"}).code == 0);
  const auto summary_path = dir / "run" / "summary.json";
  std::ifstream in(summary_path);
  auto summary = nlohmann::json::parse(in);
  in.close();
  // 300 x 300 groups: 90,000 cells (a 1,500-group matrix made a page of 294 MB).
  summary["links"]["group_bytes"] = std::vector<std::vector<double>>(300, std::vector<double>(300, 1.0));
  std::ofstream(summary_path) << summary.dump();
  expect_exit_2({"report", (dir / "run").string()},
                {"summary.json: links.group_bytes: must be a group x group array of at most 256 rows"});
  summary["links"].erase("group_bytes");
  std::ofstream(summary_path) << summary.dump();
  std::ofstream(dir / "run" / "links.csv") << "link,class\n1,\"unterminated\n";
  const auto r = exasim_run({"report", (dir / "run").string()});
  INFO(r.err);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.code == 2);
}
