#include "validate/validation.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

using namespace exasim;

TEST_CASE("repeated measurements: median, extremes and spread relative to the median", "[unit]") {
  const auto odd = validate::spread_of({0.157, 0.119, 0.130});
  CHECK(odd.median == 0.130);
  CHECK(odd.min == 0.119);
  CHECK(odd.max == 0.157);
  CHECK(odd.spread_pct == Approx(100 * (0.157 - 0.119) / 0.130));
  const auto even = validate::spread_of({2.0, 1.0, 4.0, 3.0});
  CHECK(even.median == 2.5);
  CHECK(even.spread_pct == Approx(120.0));
  CHECK(validate::spread_of({}).spread_pct == 0);
  CHECK(validate::spread_of({0.5}).spread_pct == 0);
}

TEST_CASE("class medians count a class a sample lacks as 0 there", "[unit]") {
  const auto medians = validate::class_medians({{{"compute", 1.0}, {"all_reduce.x", 0.2}},
                                                {{"compute", 3.0}, {"all_reduce.x", 0.4}},
                                                {{"compute", 2.0}, {"exposed_comm", 0.1}}});
  REQUIRE(medians.size() == 3);
  CHECK(medians.at("compute") == 2.0);
  CHECK(medians.at("all_reduce.x") == 0.2);  // of 0.2, 0.4 and 0
  CHECK(medians.at("exposed_comm") == 0.0);  // of 0, 0 and 0.1
  CHECK(validate::class_medians({}).empty());
}

TEST_CASE("validate refuses a repeat count outside 1-100 before emulating", "[unit]") {
  validate::ValidateOptions o;
  o.ranks = 4;
  o.repeats = 0;
  std::ostringstream log;
  const std::string scenario = std::string(EXASIM_TEST_DATA_DIR) + "/validate/cases/x4-oar.json";
  CHECK_THROWS_WITH(validate::validate_scenario(scenario, o, log),
                    Catch::Contains("--repeats") && Catch::Contains("1 to 100"));
  CHECK(log.str().empty());
}

TEST_CASE("validate refuses a stolen-time bound outside 0-100 before emulating", "[unit]") {
  validate::ValidateOptions o;
  o.ranks = 4;
  std::ostringstream log;
  const std::string scenario = std::string(EXASIM_TEST_DATA_DIR) + "/validate/cases/x4-oar.json";
  for (double bad : {-1.0, 101.0, std::nan("")}) {
    o.max_steal_pct = bad;
    CHECK_THROWS_WITH(validate::validate_scenario(scenario, o, log),
                      Catch::Contains("--max-steal-pct") && Catch::Contains("0 to 100"));
  }
  CHECK(log.str().empty());
}

TEST_CASE("calibrate refuses a stolen-time bound outside 0-100 before measuring", "[unit]") {
  validate::CalibrateOptions o;
  o.out = "/nonexistent-dir-never-written/machine.json";
  std::ostringstream log;
  for (double bad : {-0.5, 100.5, std::nan("")}) {
    o.max_steal_pct = bad;
    CHECK_THROWS_WITH(validate::calibrate(o, log), Catch::Contains("--max-steal-pct") && Catch::Contains("0 to 100"));
  }
  CHECK(log.str().empty());
}

TEST_CASE("a probed host scales the calibrated bandwidth and every latency, nothing else", "[unit]") {
  const auto machine = nlohmann::json::parse(R"({"name": "calibrated", "gpu": "a100-40gb",
    "node": {"gpus": 1, "nics": 1, "nic_bandwidth_Bps": 2e9, "nic_latency_s": 1e-5},
    "network": {"topology": "single_switch"},
    "collectives": {"step_overhead_s": 2e-4, "step_costs": [
      {"kind": "all_reduce", "step_overhead_s": 3e-4, "bandwidth_scale": 0.7}]}})");
  const auto probed = validate::scaled_machine(machine, 0.5, 2.0);
  CHECK(probed["node"]["nic_bandwidth_Bps"] == 1e9);
  CHECK(probed["node"]["nic_latency_s"] == 2e-5);
  CHECK(probed["collectives"]["step_overhead_s"] == 4e-4);
  CHECK(probed["collectives"]["step_costs"][0]["step_overhead_s"] == 6e-4);
  CHECK(probed["collectives"]["step_costs"][0]["bandwidth_scale"] == 0.7);  // a share, not a rate
  CHECK(validate::scaled_machine(machine, 1, 1) == machine);
}

TEST_CASE("a calibration is disturbed when it says so, or in an older file when a run it fitted lost over 15%",
          "[unit]") {
  using nlohmann::json;
  // Hand-written machine files: no sources, or sources in shapes calibrate never writes.
  CHECK(validate::disturbed_calibration(json::object()).empty());
  CHECK(validate::disturbed_calibration(json::array()).empty());
  CHECK(validate::disturbed_calibration(json::parse(R"({"sources": "vendor datasheet"})")).empty());
  CHECK(validate::disturbed_calibration(
            json::parse(R"({"sources": {"calibration_steal_pct": "none", "calibration_disturbed": "no"}})"))
            .empty());
  CHECK(
      validate::disturbed_calibration(json::parse(R"({"sources": {"calibration_steal_pct": [3.2, 15, -1]}})")).empty());
  CHECK_THAT(validate::disturbed_calibration(json::parse(R"({"sources": {"calibration_steal_pct": [31, 3.2, 2.7]}})")),
             Catch::Contains("a run it fitted lost 31.0%"));
  CHECK_THAT(validate::disturbed_calibration(
                 json::parse(R"({"sources": {"calibration_disturbed": true, "calibration_steal_pct": [20, 25]}})")),
             Catch::Contains("the hypervisor disturbed every run it fitted") && Catch::Contains("up to 25.0%"));
  // calibrate's own judgement stands: runs it pooled under a --max-steal-pct of 30 are not disturbed.
  CHECK(validate::disturbed_calibration(
            json::parse(R"({"sources": {"calibration_disturbed": false, "calibration_steal_pct": [20, 2]}})"))
            .empty());
}
