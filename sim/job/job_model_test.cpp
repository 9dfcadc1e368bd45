#include "sim/job/job_model.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace exasim::job;

TEST_CASE("Young and Daly intervals match hand-computed values", "[unit]") {
  // C = 60 s, M = 4 h = 14,400 s. Young: sqrt(2 x 60 x 14,400) = sqrt(1,728,000) = 1314.534 s.
  CHECK(young_interval_s(60, 14400) == Approx(1314.5341));
  // Daly: 1314.534 x (1 + sqrt(60/28,800)/3 + 60/259,200) - 60 = 1314.534 x 1.0154463 - 60 = 1274.838 s.
  CHECK(daly_interval_s(60, 14400) == Approx(1274.8384));
  // C >= 2M: Daly's estimate is M itself.
  CHECK(daly_interval_s(100, 40) == 40);
}

TEST_CASE("the expected time follows Daly's model", "[unit]") {
  // W = 1000 s, tau = 100 s, C = 10 s, R = 0, M = 1000 s: 1000 x (e^0.11 - 1) x 1000/100 = 1162.781 s.
  CHECK(expected_time_s(1000, 100, 10, 0, 1000) == Approx(1162.7807));
  // R = 50 s multiplies it by e^(50/1000): 1222.398 s.
  CHECK(expected_time_s(1000, 100, 10, 50, 1000) == Approx(1222.3977));
  // No failures: W (1 + C/tau) = 1000 x 1.1.
  CHECK(expected_time_s(1000, 100, 10, 0, 0) == Approx(1100));
  CHECK(goodput(100, 10, 0, 0) == Approx(1 / 1.1));
}

TEST_CASE("the searched optimum is at least as good as Young's and Daly's intervals", "[unit]") {
  for (double c : {10.0, 60.0, 600.0}) {
    for (double m : {3600.0, 4 * 3600.0, 40000.0}) {
      const double r = 300;
      const double tau = optimum_interval_s(c, r, m, 1, 10 * m);
      // At least as good, to rounding (Daly's estimate can be as good as the optimum to 1e-12).
      const double best = goodput(tau, c, r, m) * (1 + 1e-12);
      CHECK(best >= goodput(young_interval_s(c, m), c, r, m));
      CHECK(best >= goodput(daly_interval_s(c, m), c, r, m));
      // A maximum: 1 % either side is no better.
      CHECK(best >= goodput(tau * 1.01, c, r, m));
      CHECK(best >= goodput(tau * 0.99, c, r, m));
    }
  }
  // Where C << M, Young's interval is close to the optimum (within 5 %).
  CHECK(optimum_interval_s(10, 0, 40000, 1, 400000) == Approx(young_interval_s(10, 40000)).epsilon(0.05));
}

namespace {
JobInputs energy_inputs() {
  JobInputs in;
  in.config.steps = 1000;
  in.config.pue = 1.2;
  in.config.node_w = 1000;
  in.config.cost_per_gpu_hour = 2;
  in.iteration_s = 10;
  in.straggler_iteration_s = 10;
  in.busy_fraction = 0.75;
  in.gpus = 8;
  in.nodes = 1;
  in.busy_w = 700;
  in.idle_w = 70;
  return in;
}
}  // namespace

TEST_CASE("energy and cost of a run without failures", "[unit]") {
  const auto e = estimate_job(energy_inputs());
  const auto& all = e.what_if.front();
  // 1000 steps x 10 s = 10,000 s, no checkpoints (no failures, no interval given).
  CHECK(all.elapsed_s == Approx(10000));
  CHECK(all.goodput == Approx(1));
  CHECK_FALSE(e.checkpoints);
  // Per GPU 0.75 x 700 + 0.25 x 70 = 542.5 W; 8 GPUs x 542.5 W x 10,000 s = 43.4 MJ, the node's 1 kW x
  // 10,000 s = 10 MJ; x PUE 1.2 = 64.08 MJ.
  CHECK(e.train_power_w == Approx(542.5));
  CHECK(all.energy_J == Approx(64.08e6));
  // 8 GPUs x 10,000/3600 h x 2 USD = 44.44 USD.
  CHECK(all.cost_usd == Approx(8 * 10000.0 / 3600 * 2));
}

TEST_CASE("failures, checkpoints and stragglers each lengthen the run", "[unit]") {
  auto in = energy_inputs();
  in.straggler_iteration_s = 12;
  in.config.mtbf_s = 5 * 3600;
  in.config.restart_s = 600;
  in.config.write_Bps = 1e11;
  in.state_bytes = 1e13;  // 100 s per sync checkpoint
  const auto e = estimate_job(in);
  REQUIRE(e.what_if.size() == 5);
  CHECK(e.checkpoint_stall_s == Approx(100));
  // The optimum is a whole number of (straggler) steps.
  CHECK(std::fmod(e.optimum_s, 12.0) == Approx(0).margin(1e-9));
  CHECK(e.optimum_goodput >= e.young_goodput);
  const double everything = e.what_if[0].elapsed_s;
  for (std::size_t i = 1; i < e.what_if.size(); ++i) CHECK(e.what_if[i].elapsed_s < everything);
  // The ideal: 1000 steps of the unslowed 10 s.
  CHECK(e.what_if.back().elapsed_s == Approx(10000));
  // No stragglers: the same goodput (it does not depend on W) over 10,000 s of work instead of 12,000.
  CHECK(e.what_if[3].elapsed_s == Approx(everything * 10 / 12).epsilon(1e-3));
  // The goodput curve peaks at the optimum's neighbourhood: no point beats the optimum.
  for (const auto& [tau, g] : e.goodput_curve) CHECK(g <= e.optimum_goodput * (1 + 1e-12));
}

TEST_CASE("an overlapped checkpoint stalls only for the snapshot", "[unit]") {
  auto in = energy_inputs();
  in.config.mtbf_s = 5 * 3600;
  in.config.restart_s = 600;
  in.config.write_Bps = 1e11;
  in.config.mode = CheckpointMode::Overlapped;
  in.config.snapshot_Bps = 5e10;
  in.state_bytes = 1e13;
  const auto e = estimate_job(in);
  // 1e13 B over 8 GPUs at 50 GB/s each: 25 s; the 100 s write runs beside training and adds its lag to R.
  CHECK(e.checkpoint_stall_s == Approx(25));
  CHECK(e.restart_s == Approx(700));
  CHECK(e.interval_s >= 100);
}
