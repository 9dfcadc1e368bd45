#include "sim/api/simulate.hpp"

#include "sim/core/error.hpp"
#include "sim/flow/fast_runtime.hpp"
#include "sim/report/summary_views.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace exasim;

namespace {

// 16 GPUs, two layers: a run takes milliseconds.
scenario::Scenario small() {
  return scenario::parse_scenario(nlohmann::json::parse(R"({"machine": "simple-a100",
    "model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
    "gpus": 16, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
    "training": {"global_batch": 16, "recompute": "full"}, "seed": 3})"),
                                  "small.json");
}

}  // namespace

TEST_CASE("simulate gives the summary of the chain it replaces", "[integration]") {
  const auto s = small();
  const auto summary = api::simulate(s);

  // The chain exasim simulate, the benches and validate/ each assembled by hand.
  auto prepared = scenario::prepare_job(s);
  flow::FastRuntime fast(*prepared->topology, {});
  auto expected = report::make_summary(s, prepared->plan, fast.run(prepared->job, {}, {}));
  expected.compute_by_kernel = report::compute_by_kernel(prepared->plan, prepared->job.kernel_time_s);

  CHECK(report::to_json(summary).dump() == report::to_json(expected).dump());
  CHECK(summary.backend == "fast");
  CHECK(summary.iteration_time_s > 0);
  CHECK(summary.ranks.size() == 16);
  REQUIRE(summary.compute_by_kernel);
  CHECK_FALSE(summary.compute_by_kernel->empty());
  CHECK(summary.wall_s > 0);
}

TEST_CASE("simulate traces only the ranks asked for, and only with a receiver", "[integration]") {
  const auto s = small();
  api::SimulateOptions options;
  options.traced_ranks = {false, true, false, true};
  std::set<std::uint32_t> seen;
  std::size_t calls = 0;
  options.on_trace = [&](const scenario::PreparedJob& job, std::vector<trace::TraceRow> rows) {
    ++calls;
    CHECK(job.plan.grid.world_size() == 16);
    for (const auto& row : rows) seen.insert(row.rank);
  };
  const auto traced = api::simulate(s, options);
  CHECK(calls == 1);
  CHECK(seen == std::set<std::uint32_t>{1, 3});
}

TEST_CASE("tracing is a pure observer: the same summary with any traced ranks, on both backends", "[integration]") {
  // A rank's consecutive kernels are one timer whether it is traced or not (its kernels are reported
  // from the run's start at its end), so tracing adds no event and moves no instant.
  const auto s = small();
  std::vector<api::Backend> backends{api::Backend::Fast};
#if EXASIM_HAVE_SIMGRID
  backends.push_back(api::Backend::Simgrid);
#endif
  for (const api::Backend backend : backends) {
    api::SimulateOptions plain;
    plain.backend = backend;
    auto untraced = api::simulate(s, plain);
    untraced.wall_s = 0;
    for (const std::vector<bool>& traced_ranks :
         {std::vector<bool>{true}, std::vector<bool>{false, true, false, true}, std::vector<bool>(16, true)}) {
      api::SimulateOptions options = plain;
      options.traced_ranks = traced_ranks;
      std::size_t rows = 0;
      options.on_trace = [&](const scenario::PreparedJob&, std::vector<trace::TraceRow> traced) {
        rows = traced.size();
      };
      auto traced = api::simulate(s, options);
      traced.wall_s = 0;
      INFO("backend " << traced.backend << ", " << traced_ranks.size() << " flags");
      CHECK(rows > 0);
      CHECK(traced.iteration_time_s == untraced.iteration_time_s);  // bit for bit
      CHECK(report::to_json(traced).dump() == report::to_json(untraced).dump());
    }
  }
}

TEST_CASE("simulate applies adjust_job before the run", "[integration]") {
  const auto s = small();
  const auto base = api::simulate(s);
  api::SimulateOptions options;
  options.adjust_job = [](scenario::PreparedJob& job) {
    for (auto& t : job.job.kernel_time_s) t *= 2;
  };
  const auto slower = api::simulate(s, options);
  // The kernels' own time doubles; what they lose beside communication depends on the overlap.
  CHECK(slower.compute_s - slower.compute_slowed_s == Approx(2 * (base.compute_s - base.compute_slowed_s)));
  CHECK(slower.iteration_time_s > base.iteration_time_s);
}

TEST_CASE("backends are named fast or simgrid", "[unit]") {
  CHECK(api::parse_backend("fast") == api::Backend::Fast);
  CHECK(api::parse_backend("simgrid") == api::Backend::Simgrid);
  CHECK_THROWS_WITH(api::parse_backend("ns3"), Catch::Contains("unknown backend (allowed: fast, simgrid)"));
}

TEST_CASE("the simgrid backend runs, or is refused when this build has none", "[integration]") {
  const auto s = small();
  api::SimulateOptions options;
  options.backend = api::Backend::Simgrid;
#if EXASIM_HAVE_SIMGRID
  const auto summary = api::simulate(s, options);
  CHECK(summary.backend == "simgrid");
  CHECK(summary.flows == api::simulate(s).flows);
#else
  CHECK_THROWS_WITH(api::simulate(s, options), Catch::Contains("this exasim was built without SimGrid"));
#endif
}

TEST_CASE("simulate refuses a scenario that does not fit unless told not to check", "[integration]") {
  auto doc = nlohmann::json::parse(R"({"machine": "simple-a100",
    "model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
    "gpus": 16, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
    "training": {"global_batch": 16, "recompute": "full"}, "seed": 3})");
  doc["model"]["hidden"] = 16384;
  doc["model"]["heads"] = 128;
  doc["model"]["layers"] = 64;
  const auto s = scenario::parse_scenario(doc, "big.json");
  REQUIRE(scenario::memory_per_gpu(s).total() > s.machine.gpu_choice.device.hbm_capacity_bytes.value);
  CHECK_THROWS_AS(api::simulate(s), InputError);
}

TEST_CASE("a step-cost row slows exactly the collectives it covers", "[integration]") {
  const double base = api::simulate(small()).iteration_time_s;
  auto with_rows = [&](const std::string& rows) {
    auto s = small();
    auto doc = s.resolved;
    doc["machine"]["collectives"] = nlohmann::json::parse(R"({"step_costs": )" + rows + "}");
    return api::simulate(scenario::parse_scenario(doc, "small.json")).iteration_time_s;
  };
  // Half the bandwidth and a millisecond per step for every all-reduce: slower.
  const double slowed = with_rows(R"([{"kind": "all_reduce", "step_overhead_s": 1e-3, "bandwidth_scale": 0.5}])");
  CHECK(slowed > base * 1.01);
  // A band no buffer of this job reaches changes nothing.
  CHECK(with_rows(R"([{"kind": "all_reduce", "up_to_bytes": 1, "step_overhead_s": 1e-3}])") == base);
}
