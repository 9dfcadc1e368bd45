#include "sim/api/layer_sampling.hpp"

#include "sim/api/simulate.hpp"
#include "sim/core/child_process.hpp"
#include "sim/core/error.hpp"
#include "sim/report/summary_views.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

using namespace exasim;

namespace {

/// 64 GPUs on one switch, `layers` layers and `sample` (simulation.sample_layers): milliseconds a run.
/// One switch and ring collectives make every layer the same, so sampling must give the full run.
// Ring collectives: their time is affine in the bytes, so a sample of identical layers extrapolates
// exactly. (nccl's protocol choice and pipeline fill change with the message size: the gradient
// reductions of K, 2K and all layers are costed differently, and sampling is approximate.)
scenario::Scenario sampled_job(int layers, int sample, const std::string& parallel = R"({"scheme": "axonn4d",
    "gx": 2, "gy": 2, "gz": 2, "gdata": 8})") {
  return scenario::parse_scenario(nlohmann::json::parse(R"({"machine": "simple-a100",
    "model": {"layers": )" + std::to_string(layers) + R"(, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
    "gpus": 64, "parallel": )" + parallel + R"(,
    "training": {"global_batch": 64, "recompute": "full"}, "collectives": {"algorithm": "ring"},
    "simulation": {"sample_layers": )" + std::to_string(sample) +
                                                        "}}"),
                                  "job.json");
}

}  // namespace

TEST_CASE("layer sampling picks K and 2K layers, or none when that is the whole model", "[unit]") {
  CHECK_FALSE(api::layer_sampling(sampled_job(24, 0)));
  const auto two = api::layer_sampling(sampled_job(24, 2));
  REQUIRE(two);
  CHECK(two->fewer == 2);
  CHECK(two->more == 4);
  CHECK(two->layers == 24);
  CHECK(api::layer_sampling(sampled_job(9, 4)));
  CHECK_FALSE(api::layer_sampling(sampled_job(8, 4)));  // 2K = 8 layers: simulate them all
  // Megatron samples whole pipelines: pp x virtual_stages layers a unit.
  const auto pipelined =
      api::layer_sampling(sampled_job(48, 1, R"({"scheme": "megatron", "tp": 2, "pp": 4, "dp": 8})"));
  REQUIRE(pipelined);
  CHECK(pipelined->fewer == 4);
  CHECK(pipelined->more == 8);
}

TEST_CASE("with_layers changes the layers and turns sampling off", "[unit]") {
  const auto s = api::with_layers(sampled_job(24, 2), 4);
  CHECK(s.model.layers == 4);
  CHECK(s.sample_layers == 0);
  CHECK(s.resolved["model"]["layers"] == 4);
  CHECK_FALSE(s.resolved.contains("simulation"));
}

TEST_CASE("extrapolation is the line through the two samples", "[unit]") {
  const api::LayerSampling sampling{2, 4, 24};
  CHECK(api::extrapolate(1.0, 2.0, sampling) == Approx(12.0));  // 0.5 a layer, 20 more layers
  CHECK(api::extrapolate(3.0, 3.0, sampling) == 3.0);

  runtime::RunResult fewer, more;
  fewer.iteration_s = 1.0;
  more.iteration_s = 2.0;
  fewer.ranks = {{0.9, 0.5, {0.1, 0.3}}, {1.0, 0.5, {0.2, 0.0}}};
  more.ranks = {{1.9, 1.0, {0.2, 0.2}}, {2.0, 1.0, {0.4, 0.0}}};
  fewer.rank0_wire_bytes = {100, 10};
  more.rank0_wire_bytes = {200, 10};
  fewer.rank0_collectives = {6, 1};
  more.rank0_collectives = {10, 1};
  fewer.events = 5;
  more.events = 7;
  const auto run = api::extrapolate(fewer, more, sampling);
  CHECK(run.iteration_s == Approx(12.0));
  CHECK(run.ranks[0].finish_s == Approx(11.9));
  CHECK(run.ranks[1].finish_s == Approx(12.0));
  CHECK(run.ranks[0].compute_s == Approx(6.0));
  CHECK(run.ranks[0].exposed_s[0] == Approx(1.2));
  CHECK(run.ranks[0].exposed_s[1] == 0.0);  // a falling exposure stops at zero
  CHECK(run.rank0_wire_bytes == std::vector<double>{1200, 10});
  CHECK(run.rank0_collectives == std::vector<std::uint64_t>{50, 1});
  CHECK(run.events == 12);  // what was simulated, not an estimate

  // A rank whose own slope would outrun the iteration finishes with it.
  more.ranks[0].finish_s = 2.2;
  CHECK(api::extrapolate(fewer, more, sampling).ranks[0].finish_s == Approx(12.0));
}

TEST_CASE("a sampled run of identical layers gives the full run's figures", "[integration]") {
  const auto full = api::simulate(sampled_job(24, 0));
  const auto sampled = api::simulate(sampled_job(24, 2));
  REQUIRE(sampled.sampled_layers);
  CHECK(sampled.sampled_layers->fewer == 2);
  CHECK(sampled.sampled_layers->more == 4);
  CHECK_FALSE(full.sampled_layers);
  CHECK(sampled.iteration_time_s == Approx(full.iteration_time_s).epsilon(1e-9));
  CHECK(sampled.compute_s == Approx(full.compute_s).epsilon(1e-9));
  CHECK(sampled.idle_s == Approx(full.idle_s).epsilon(1e-6).margin(1e-9));
  REQUIRE(sampled.dimensions.size() == full.dimensions.size());
  for (std::size_t d = 0; d < full.dimensions.size(); ++d) {
    INFO(full.dimensions[d].name);
    CHECK(sampled.dimensions[d].exposed_comm_s ==
          Approx(full.dimensions[d].exposed_comm_s).epsilon(1e-9).margin(1e-12));
    CHECK(sampled.dimensions[d].rank0_wire_bytes == Approx(full.dimensions[d].rank0_wire_bytes).epsilon(1e-12));
    CHECK(sampled.dimensions[d].rank0_collectives == full.dimensions[d].rank0_collectives);
  }
  REQUIRE(sampled.compute_by_kernel);
  REQUIRE(sampled.compute_by_kernel->size() == full.compute_by_kernel->size());
  for (std::size_t k = 0; k < full.compute_by_kernel->size(); ++k)
    CHECK((*sampled.compute_by_kernel)[k].seconds == Approx((*full.compute_by_kernel)[k].seconds).epsilon(1e-9));
  CHECK(sampled.memory.total() == full.memory.total());  // the model's, not a sample's
  CHECK(sampled.events < full.events);                   // 6 layers simulated instead of 24

  // The views say it is an approximation.
  std::ostringstream text;
  report::print_summary(text, sampled);
  CHECK_THAT(text.str(), Catch::Contains("approximate: 2 and 4 layers simulated"));
  CHECK(report::to_json(sampled)["sampled_layers"] == nlohmann::json{2, 4});
  CHECK_FALSE(report::to_json(full).contains("sampled_layers"));
}

TEST_CASE("a pipelined megatron job samples whole pipelines", "[integration]") {
  const std::string megatron = R"({"scheme": "megatron", "tp": 2, "pp": 4, "dp": 8})";
  const auto full = api::simulate(sampled_job(32, 0, megatron));
  const auto sampled = api::simulate(sampled_job(32, 1, megatron));
  REQUIRE(sampled.sampled_layers);
  CHECK(sampled.sampled_layers->more == 8);
  CHECK(sampled.iteration_time_s == Approx(full.iteration_time_s).epsilon(1e-6));
}

TEST_CASE("layer sampling refuses traces and link loads", "[integration]") {
  api::SimulateOptions traced;
  traced.traced_ranks = {true};
  traced.on_trace = [](const scenario::PreparedJob&, std::vector<trace::TraceRow>) {};
  CHECK_THROWS_WITH(api::simulate(sampled_job(24, 2), traced),
                    Catch::Contains("simulation.sample_layers") && Catch::Contains("no traces or link loads"));
  api::SimulateOptions metered;
  metered.hottest_links = 5;
  CHECK_THROWS_AS(api::simulate(sampled_job(24, 2), metered), InputError);
  // Without sampling in effect (2K covers the model) both are fine.
  CHECK_NOTHROW(api::simulate(sampled_job(4, 2), metered));
}

TEST_CASE("simulation.sample_layers is checked", "[unit]") {
  CHECK_THROWS_WITH(sampled_job(24, -1), Catch::Contains("simulation.sample_layers") && Catch::Contains("job.json"));
  CHECK_THROWS_WITH(sampled_job(24, 5000), Catch::Contains("simulation.sample_layers"));
  CHECK_THROWS_WITH(scenario::parse_scenario(nlohmann::json::parse(R"({"machine": "simple-a100",
    "model": "gpt-5b", "gpus": 64, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 8},
    "training": {"global_batch": 64}, "simulation": {"sample": 2}})"),
                                             "typo.json"),
                    Catch::Contains("simulation.sample"));
}

TEST_CASE("the two samples run at once give the same summary as one after the other", "[integration]") {
  // 2 CPUs are needed for the child (available_cpus()); with one, both runs are sequential and
  // this only checks that the option is harmless.
  INFO("available CPUs: " << available_cpus());
  for (const std::string& parallel : {std::string(R"({"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 8})"),
                                      std::string(R"({"scheme": "megatron", "tp": 2, "pp": 4, "dp": 8})")}) {
    api::SimulateOptions concurrent;
    concurrent.concurrent_samples = true;
    const auto one_by_one = api::simulate(sampled_job(32, 1, parallel));
    const auto at_once = api::simulate(sampled_job(32, 1, parallel), concurrent);
    CHECK(report::to_json(at_once).dump() == report::to_json(one_by_one).dump());
    std::ostringstream a, b;
    report::print_summary(a, at_once);
    report::print_summary(b, one_by_one);
    CHECK(a.str() == b.str());
  }
}

TEST_CASE("an input error in the concurrent K-layer sample reaches the caller as itself", "[integration]") {
  // adjust_job refuses the K-layer job only (it has fewer ops), which then runs in the child.
  const auto fewer_ops = scenario::prepare_job(api::with_layers(sampled_job(24, 2), 2))->plan.streams[0].ops.size();
  api::SimulateOptions options;
  options.concurrent_samples = true;
  options.adjust_job = [fewer_ops](scenario::PreparedJob& prepared) {
    if (prepared.plan.streams[0].ops.size() == fewer_ops)
      throw InputError("what-if.json", "kernels.scale", "must be positive");
  };
  try {
    (void)api::simulate(sampled_job(24, 2), options);
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(e.field() == "kernels.scale");
    CHECK(std::string(e.what()) == "what-if.json: kernels.scale: must be positive");
  }
}
