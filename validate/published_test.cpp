// The published-runs case (validate/published/) and the model presets it uses: every preset has the
// parameter count its source publishes, published.json is well formed, and every scenario it names loads.

#include "sim/core/data_dir.hpp"
#include "sim/core/json_view.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedule/model.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

using namespace exasim;

namespace {

const std::string kRoot = EXASIM_TEST_DATA_DIR;
const std::string kPublished = kRoot + "/validate/published";

schedule::ModelSpec model_preset(const std::string& name) {
  const std::string path = kRoot + "/configs/models/" + name + ".json";
  const auto doc = read_json_file(path);
  return schedule::load_model_spec(JsonView(doc, path, "model"));
}

nlohmann::json published() { return read_json_file(kPublished + "/published.json"); }

// The figures bench_published compares (published.json "figures" describes them).
const std::set<std::string> kComparable = {"iteration_time_s", "hardware_tflops_per_gpu", "hardware_percent_of_peak",
                                           "model_tflops_per_gpu", "mfu_percent"};

}  // namespace

TEST_CASE("model presets have the parameter counts their sources publish", "[unit]") {
  // Billions of parameters as published: Narayanan et al. SC21 Table 1 (to 0.1B), Korthikanti et al. 2022
  // Table 3 (nominal), Llama 2 Table 1 and Llama 3 Table 3 (nominal sizes). exasim counts the matrices and
  // the embedding (and the untied output layer), not biases, norms or position embeddings: within 4%.
  const std::pair<const char*, double> presets[] = {
      {"megatron-1.7b", 1.7},   {"megatron-3.6b", 3.6},  {"megatron-7.5b", 7.5},   {"megatron-18b", 18.4},
      {"megatron-39b", 39.1},   {"megatron-76b", 76.1},  {"megatron-145b", 145.6}, {"megatron-310b", 310.1},
      {"megatron-530b", 529.6}, {"megatron-1t", 1008.0}, {"megatron-22b", 22},     {"megatron-175b", 175},
      {"llama2-7b", 7},         {"llama2-70b", 70},      {"llama3-8b", 8},         {"llama3-70b", 70},
      {"llama3-405b", 405},
  };
  for (const auto& [name, billions] : presets) {
    INFO(name);
    const auto m = model_preset(name);
    CHECK(m.name == name);
    const double p = m.parameters() / 1e9;
    CHECK(std::fabs(p - billions) / billions < 0.04);
  }
  // The Llama shapes: SwiGLU, untied output layer, grouped-query attention where published.
  for (const char* name : {"llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b"}) {
    INFO(name);
    const auto m = model_preset(name);
    CHECK(m.activation == schedule::Activation::Swiglu);
    CHECK_FALSE(m.tied_embeddings);
  }
  CHECK(model_preset("llama2-7b").kv() == 32);
  CHECK(model_preset("llama2-70b").kv() == 8);
  CHECK(model_preset("llama3-405b").kv() == 8);
  // Narayanan's 529.6B and 1008B rows are Korthikanti's 530B and 1T: one preset each.
  CHECK(model_preset("megatron-530b").layers == 105);
  CHECK(model_preset("megatron-1t").hidden == 25600);
}

TEST_CASE("published.json names a source, a figure and an existing scenario for every run", "[unit]") {
  const auto doc = published();
  REQUIRE(doc.contains("suites"));
  REQUIRE(doc["runs"].is_array());
  REQUIRE(doc["runs"].size() >= 20);
  std::set<std::string> names;
  for (const auto& run : doc["runs"]) {
    const std::string name = run.value("name", "");
    INFO(name);
    CHECK(!name.empty());
    CHECK(names.insert(name).second);  // unique
    const std::string suite = run.value("suite", "");
    REQUIRE(doc["suites"].contains(suite));
    CHECK(!doc["suites"][suite].value("source", "").empty());
    CHECK(std::filesystem::is_regular_file(kPublished + "/" + run.value("scenario", "")));
    CHECK(run.value("source", "").size() > 20);
    REQUIRE(run["published"].is_object());
    std::size_t comparable = 0;
    for (const auto& [figure, value] : run["published"].items()) {
      CHECK(value.is_number());
      CHECK(value.get<double>() > 0);
      comparable += kComparable.count(figure);
    }
    CHECK(comparable >= 1);
    // The suite's primary figure is there, and the run says what is confirmed and what is estimated.
    CHECK(run["published"].contains(doc["suites"][suite].value("primary", "")));
    CHECK(run["confirmed"].is_array());
    CHECK(!run["confirmed"].empty());
    CHECK(run["estimated"].is_array());
  }
  for (const auto& n : doc["not_expressible"]) {
    INFO(n.value("name", ""));
    CHECK(!n.value("why", "").empty());
    CHECK(n.value("source", "").size() > 20);
    CHECK(!n["published"].empty());
  }
}

TEST_CASE("every published scenario loads with its machine and model presets", "[integration]") {
  const auto doc = published();
  for (const auto& run : doc["runs"]) {
    const std::string file = kPublished + "/" + run["scenario"].get<std::string>();
    INFO(file);
    scenario::Scenario s;
    REQUIRE_NOTHROW(s = scenario::load_scenario(file, {}));
    CHECK(s.name == run["name"].get<std::string>());
    CHECK(s.scheme->name == "megatron");
    CHECK(s.resolved.value("description", "").size() > 40);
  }
}
