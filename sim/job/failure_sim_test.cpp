#include "sim/job/failure_sim.hpp"

#include "sim/job/job_model.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace exasim;

TEST_CASE("with failures so rare that none strikes, a simulated run is the work plus its checkpoints", "[unit]") {
  // 10 intervals of 100 s, 9 checkpoints of 5 s (none after the last interval).
  const auto run = job::simulate_run(1000, 100, 5, 60, 1e15, 20, 7);
  CHECK(run.mean_elapsed_s == Approx(1045).epsilon(1e-9));
  CHECK(run.mean_failures == 0);
  CHECK(run.stderr_elapsed_s == Approx(0).margin(1e-6));
}

TEST_CASE("the simulated timeline agrees with Daly's expected time within its standard error", "[unit]") {
  // M = 3 h, C = 120 s, R = 600 s, 30 days of work: about 240 failures a trial.
  const double m = 3 * 3600, c = 120, r = 600, work = 30 * 86400;
  for (const double tau : {600.0, 1600.0, 6000.0}) {
    const auto run = job::simulate_run(work, tau, c, r, m, 400, 11);
    const double daly = job::expected_time_s(work, tau, c, r, m);
    // Daly's form charges a checkpoint after the last interval too: within 4 standard errors + 1 C.
    CHECK(std::abs(run.mean_elapsed_s - daly) < 4 * run.stderr_elapsed_s + c);
    CHECK(run.mean_failures > 100);
  }
}

TEST_CASE("the simulated optimum is near Daly's and beats intervals far from it", "[unit]") {
  const double m = 3 * 3600, c = 120, r = 600, work = 30 * 86400;
  const double daly = job::daly_interval_s(c, m);
  const std::vector<double> candidates = {daly / 8, daly / 2, daly, daly * 2, daly * 8};
  const auto best = job::simulated_optimum(work, candidates, c, r, m, 400, 3);
  CHECK(best.interval_s >= daly / 2);
  CHECK(best.interval_s <= daly * 2);
  // Deterministic: the same seed, the same answer to the last bit.
  const auto again = job::simulated_optimum(work, candidates, c, r, m, 400, 3);
  CHECK(again.interval_s == best.interval_s);
  CHECK(again.run.mean_elapsed_s == best.run.mean_elapsed_s);
  CHECK_THROWS(job::simulate_run(work, 0, c, r, m, 10, 1));
}
