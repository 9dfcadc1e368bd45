#include "sim/api/job.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

using namespace exasim;

namespace {

// 16 GPUs, two layers (as simulate_test.cpp's): a run takes milliseconds. One straggler (1/16 of the
// GPUs), its compute twice as slow.
scenario::Scenario with_job(const std::string& job) {
  return scenario::parse_scenario(nlohmann::json::parse(R"({"machine": "simple-a100",
    "model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
    "gpus": 16, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
    "training": {"global_batch": 16, "recompute": "full"}, "seed": 3, "job": )" +
                                                        job + "}"),
                                  "small.json");
}

constexpr const char* kJob = R"({"steps": 1000, "failures": {"per_gpu_hour": 1e-3, "restart_s": 60},
  "checkpoint": {"write_Bps": 1e9}, "stragglers": {"fraction": 0.0625, "slowdown": 2}})";

}  // namespace

TEST_CASE("a straggling GPU slows the simulated step, as a direct run with that rank slowed", "[integration]") {
  const auto s = with_job(kJob);
  const auto r = api::run_job(s);
  REQUIRE(r.straggler_ranks.size() == 1);
  const double base = r.baseline.iteration_time_s;
  const double slowed = r.with_stragglers.iteration_time_s;
  // The synchronous step waits for the slow GPU, which at most doubles the step (only its compute slows).
  CHECK(slowed > base);
  CHECK(slowed <= 2 * base);
  // The same rank slowed by hand through the execution core gives the same time.
  api::SimulateOptions direct;
  const auto rank = r.straggler_ranks.front();
  direct.adjust_job = [rank](scenario::PreparedJob& p) {
    p.job.rank_compute_factor.assign(16, 1.0);
    p.job.rank_compute_factor[rank] = 2.0;
  };
  CHECK(api::simulate(s, direct).iteration_time_s == slowed);
  // The slowed rank's kernel time doubled (compute_s less what kernels lost beside communication).
  const auto kernels_s = [](const runtime::RankTimes& t) { return t.compute_s - t.slowed_s; };
  CHECK(kernels_s(r.with_stragglers.ranks[rank]) == Approx(2 * kernels_s(r.baseline.ranks[rank])));
  // The job model gets the straggler's step.
  CHECK(r.inputs.straggler_iteration_s == slowed);
  CHECK(r.estimate.what_if.front().elapsed_s > r.estimate.what_if[3].elapsed_s);  // "no stragglers" is shorter
}

TEST_CASE("exasim job prices the checkpoint from the model state and the GPU's power", "[integration]") {
  const auto s = with_job(kJob);
  const auto r = api::run_job(s);
  // bf16 weights 2 B + fp32 master and Adam 12 B per parameter (schedule/memory.hpp's param_bytes).
  CHECK(r.inputs.state_bytes == Approx(s.model.parameters() * 14));
  CHECK(r.estimate.checkpoint_stall_s == Approx(r.inputs.state_bytes / 1e9));
  // simple-a100's a100-40gb: 400 W maximum TDP ([H1]).
  CHECK(r.inputs.busy_w == 400);
  const auto j = api::to_json(r);
  CHECK(j.at("what_if").size() == 5);
  CHECK(j.at("goodput").get<double>() > 0);
  CHECK(j.at("goodput").get<double>() < 1);
}

TEST_CASE("exasim job needs a job object", "[integration]") {
  auto s = with_job(kJob);
  s.job.reset();
  CHECK_THROWS_AS(api::run_job(s), InputError);
  CHECK_THROWS_WITH(api::run_job(with_job(R"({"steps": 10, "failures": {"per_gpu_hour": 0},
                                              "power": {"busy_w": 100, "idle_w": 200}})")),
                    Catch::Contains("job.power.idle_w"));
}
