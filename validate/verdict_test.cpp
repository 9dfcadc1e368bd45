// validate's verdict: within, outside, too noisy by the interval, by the hypervisor, by the calibration.
#include "validate/verdict.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace exasim::validate;

namespace {

ValidationResult result_with(double mean_pct, double half_width_pct, std::vector<double> steal_pct) {
  ValidationResult r;
  r.interval = {mean_pct, mean_pct - half_width_pct, mean_pct + half_width_pct, half_width_pct, 5};
  r.steal_pct = std::move(steal_pct);
  r.max_steal_pct = 8;
  return r;
}

}  // namespace

TEST_CASE("the verdict judges the interval of undisturbed emulations", "[unit]") {
  std::ostringstream err;
  CHECK(verdict_exit_code(result_with(2, 3, {1, 2, 8, 0, -1}), 10, err) == 0);
  CHECK(err.str().empty());
  CHECK(verdict_exit_code(result_with(-20, 3, {1, 2, 3, 4, 5}), 10, err) == kExitOutside);
  CHECK_THAT(err.str(), Catch::Contains("exceeds --max-error-pct 10"));
  err.str("");
  CHECK(verdict_exit_code(result_with(9, 4, {1, 2, 3, 4, 5}), 10, err) == kExitTooNoisy);
  CHECK_THAT(err.str(), Catch::Contains("straddles +-10%"));
}

TEST_CASE("kept emulations the hypervisor disturbed give no verdict", "[unit]") {
  for (double mean : {1.0, -25.0}) {  // inside and outside the tolerance alike
    CAPTURE(mean);
    auto r = result_with(mean, 2, {3, 24.5, 2, 25, 1});
    r.dropped_steal_pct = {30, 26, 27, 28, 29};
    CHECK(r.disturbed_kept() == 2);
    std::ostringstream err;
    CHECK(verdict_exit_code(r, 10, err) == kExitTooNoisy);
    CHECK_THAT(err.str(), Catch::Contains("too noisy to judge: 2 of the 5 emulations kept") &&
                              Catch::Contains("more than 15%") && Catch::Contains("up to 25.0%") &&
                              Catch::Contains("5 more were run and dropped"));
  }
  // Above --max-steal-pct but within 15%: an ordinary hour on a virtual machine, judged.
  std::ostringstream ordinary;
  CHECK(result_with(1, 2, {9, 14.9, 3}).disturbed_kept() == 0);
  CHECK(verdict_exit_code(result_with(1, 2, {9, 14.9, 3}), 10, ordinary) == 0);
  // A higher --max-steal-pct raises the bound with it; 100 keeps every emulation and never refuses.
  auto twenty = result_with(1, 2, {18, 19});
  twenty.max_steal_pct = 20;
  CHECK(twenty.disturbed_kept() == 0);
  twenty.steal_pct.push_back(21);
  CHECK(twenty.disturbed_kept() == 1);
  auto r = result_with(1, 2, {3, 99, 2});
  r.max_steal_pct = 100;
  CHECK(r.disturbed_kept() == 0);
  std::ostringstream err;
  CHECK(verdict_exit_code(r, 10, err) == 0);
}

TEST_CASE("a calibration measured on a disturbed host gives no verdict", "[unit]") {
  for (double mean : {1.0, -25.0}) {
    CAPTURE(mean);
    auto r = result_with(mean, 2, {1, 2, 3});
    r.calibration_disturbed = "a run it fitted lost 31.0% of the CPU time to the hypervisor (bound 15%)";
    CHECK(r.disturbed_kept() == 0);
    CHECK(r.too_noisy());
    std::ostringstream err;
    CHECK(verdict_exit_code(r, 10, err) == kExitTooNoisy);
    CHECK_THAT(err.str(), Catch::Contains("too noisy to judge: the calibration was measured on a disturbed host") &&
                              Catch::Contains("lost 31.0%"));
  }
  CHECK_FALSE(result_with(1, 2, {1, 2, 3}).too_noisy());
}
