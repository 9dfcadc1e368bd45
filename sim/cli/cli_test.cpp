#include "sim/cli/cli.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

struct Outcome {
  int code;
  std::string out, err;
};

Outcome exasim_run(std::vector<std::string> args) {
  args.insert(args.begin(), "exasim");
  std::ostringstream out, err;
  int code = exasim::cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("exasim_cli_test_" + name);
  std::ofstream(path) << text;
  return path.string();
}

const char* kGood = R"({"machine": "simple-a100",
  "model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
  "gpus": 16, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
  "training": {"global_batch": 16, "recompute": "full"}, "seed": 3})";

std::string scenario_with(const std::string& key_path, const nlohmann::json& value) {
  auto doc = nlohmann::json::parse(kGood);
  doc[nlohmann::json::json_pointer(key_path)] = value;
  return doc.dump();
}

std::string scenario_without(const std::string& key_path) {
  auto doc = nlohmann::json::parse(kGood);
  doc.erase(key_path);
  return doc.dump();
}

void expect_input_error(const std::string& name, const std::string& text, const std::string& message) {
  auto path = write_temp(name, text);
  auto r = exasim_run({"simulate", path});
  INFO("stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(r.err.find(path) != std::string::npos);
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("simulate --json reports the documented keys", "[integration]") {
  auto path = write_temp("good.json", kGood);
  auto r = exasim_run({"simulate", path, "--json"});
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"iteration_time_s", "model_flops", "hardware_flops", "tflops_per_gpu", "percent_of_peak",
                          "total_pflops", "breakdown_s", "comm_bytes_per_rank", "collectives_per_rank", "events",
                          "backend"}) {
    CHECK(j.contains(key));
  }
  for (const char* dim : {"x", "y", "z", "data"}) {
    CHECK(j["comm_bytes_per_rank"][dim].get<double>() > 0);
    CHECK(j["breakdown_s"]["exposed_comm"].contains(dim));
  }
  CHECK(j["backend"] == "fast");
  CHECK(j["iteration_time_s"].get<double>() > 0);
  CHECK(j["percent_of_peak"].get<double>() > 0);
  CHECK(j["percent_of_peak"].get<double>() < 100);
}

TEST_CASE("same scenario and seed give byte-identical output", "[integration]") {
  auto path = write_temp("det.json", kGood);
  auto dir_a = (std::filesystem::temp_directory_path() / "exasim_cli_det_a").string();
  auto dir_b = (std::filesystem::temp_directory_path() / "exasim_cli_det_b").string();
  auto a = exasim_run({"simulate", path, "--out", dir_a});
  auto b = exasim_run({"simulate", path, "--out", dir_b});
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(slurp(dir_a + "/trace.csv") == slurp(dir_b + "/trace.csv"));
  CHECK(slurp(dir_a + "/trace.json") == slurp(dir_b + "/trace.json"));
  CHECK(slurp(dir_a + "/trace.csv").size() > 1000);
}

TEST_CASE("bad scenarios exit 2 naming the file and the field", "[unit]") {
  expect_input_error("malformed.json", "{\"machine\": ", "malformed JSON");
  expect_input_error("missing_model.json", scenario_without("model"), "model: missing required field");
  expect_input_error("missing_gpus.json", scenario_without("gpus"), "gpus: missing required field");
  expect_input_error("product.json", scenario_with("/gpus", 32), "gx*gy*gz*gdata = 2*2*2*2 = 16 must equal gpus = 32");
  expect_input_error("batch.json", scenario_with("/training/global_batch", 6),
                     "training.global_batch: global_batch 6 is not divisible by gdata*gz = 4");
  expect_input_error("heads.json", scenario_with("/model/heads", 5), "model.heads: must divide hidden");
  expect_input_error("heads_gy.json", scenario_with("/parallel/gy", 1).replace(0, 0, ""),  // product then wrong
                     "gx*gy*gz*gdata");
  expect_input_error("hidden.json", scenario_with("/model/hidden", 1000), "model.heads: must divide hidden");
  expect_input_error("unknown_machine.json", scenario_with("/machine", "frontier-xl"),
                     "machine: unknown preset 'frontier-xl'");
  expect_input_error("unknown_model.json", scenario_with("/model", "gpt-7b"), "model: unknown preset 'gpt-7b'");
  expect_input_error("zero.json", scenario_with("/model/layers", 0), "model.layers: must be an integer in [1,");
  expect_input_error("negative.json", scenario_with("/training/global_batch", -4),
                     "training.global_batch: must be an integer in [1,");
  expect_input_error("negative_bw.json", scenario_with("/machine", nlohmann::json::parse(R"({"gpu": {}})")),
                     "machine.gpu.name: missing required field");
  expect_input_error("scheme.json", scenario_with("/parallel/scheme", "zero3"),
                     "parallel.scheme: 'zero3' is not one of: axonn4d");
  expect_input_error("typo.json", scenario_with("/overlap", nlohmann::json{{"oarr", true}}),
                     "overlap.oarr: unknown field");
  expect_input_error("recompute.json", scenario_with("/training/recompute", "selective"),
                     "training.recompute: 'selective' is not one of: full, none");
}

TEST_CASE("heads not divisible by gy is rejected with the fields involved", "[unit]") {
  auto doc = nlohmann::json::parse(kGood);
  doc["model"]["heads"] = 2;
  doc["parallel"]["gy"] = 4;
  doc["parallel"]["gdata"] = 1;
  expect_input_error("heads_gy.json", doc.dump(), "parallel.gy: model heads 2 are not divisible by gy = 4");
}

TEST_CASE("bad command lines exit 2", "[unit]") {
  auto path = write_temp("cmd.json", kGood);
  CHECK(exasim_run({"simulate"}).code == 2);
  CHECK(exasim_run({"simulate", path, "--set", "gpus"}).code == 2);
  CHECK(exasim_run({"simulate", path, "--set", "nothing.here=3"}).code == 2);
  CHECK(exasim_run({"simulate", path, "--backend", "ns3"}).code == 2);
  CHECK(exasim_run({"simulate", path, "--out", "/tmp/exasim_x", "--trace-ranks", "5-2"}).code == 2);
  CHECK(exasim_run({"simulate", "/nonexistent.json"}).code == 2);
  CHECK(exasim_run({"frobnicate"}).code == 2);
  CHECK(exasim_run({"--help"}).code == 0);
}

TEST_CASE("roofline answers for every device and rejects bad input with exit 2", "[unit]") {
  for (const char* gpu : {"mi250x-gcd", "a100-40gb", "a100-80gb", "gh200", "h100-sxm", "h200"}) {
    auto r = exasim_run({"roofline", "--gpu", gpu, "--gemm", "8192,8192,8192", "--json"});
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["time_s"].get<double>() > 0);
    CHECK(j["percent_of_peak"].get<double>() < 100);
    CHECK(j["bound"] == "compute");
  }
  auto skinny = nlohmann::json::parse(exasim_run({"roofline", "--gpu", "a100-40gb", "--gemm", "16,8192,8192", "--json"}).out);
  CHECK(skinny["bound"] == "memory");
  auto unknown = exasim_run({"roofline", "--gpu", "a100", "--gemm", "1,2,3"});
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("unknown device 'a100'") != std::string::npos);
  CHECK(exasim_run({"roofline", "--gpu", "a100-40gb", "--gemm", "1,2"}).code == 2);
  CHECK(exasim_run({"roofline", "--gpu", "a100-40gb", "--gemm", "1,-2,3"}).code == 2);
  CHECK(exasim_run({"roofline", "--gpu", "a100-40gb", "--gemm", "1,2,3", "--layout", "tt"}).code == 2);
}
