// The validation's confidence interval and verdict against hand-computed cases.
#include "validate/noise.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace exasim::validate;

TEST_CASE("the error interval is Student's t over the per-repeat errors", "[unit]") {
  // Simulated 1.0 s against 0.8, 1.0 and 1.25 s: errors +25%, 0%, -20%; mean 1.667%, sample sd
  // 22.546%; half-width 4.303 x 22.546 / sqrt 3 = 56.01%.
  const auto e = error_interval({0.8, 1.0, 1.25}, 1.0);
  CHECK(e.samples == 3);
  CHECK(e.mean_pct == Approx(5.0 / 3));
  CHECK(e.stddev_pct == Approx(22.546).epsilon(1e-4));
  CHECK(e.high_pct - e.mean_pct == Approx(4.303 * 22.546 / std::sqrt(3.0)).epsilon(1e-4));
  CHECK(e.mean_pct - e.low_pct == Approx(e.high_pct - e.mean_pct));
}

TEST_CASE("the verdict needs the whole interval on one side of the tolerance", "[unit]") {
  ErrorInterval e{3, 1, 5, 2, 5};
  CHECK(judge(e, 10) == Verdict::within);
  CHECK(judge(e, 4) == Verdict::undecided);
  CHECK(judge(e, 0.5) == Verdict::outside);
  CHECK(judge(ErrorInterval{-12, -15, -11, 1, 4}, 10) == Verdict::outside);
  // One repeat: no interval, its error decides.
  const auto single = error_interval({0.5}, 0.6);
  CHECK(single.low_pct == single.high_pct);
  CHECK(judge(single, 25) == Verdict::within);
}

TEST_CASE("repeats to decide: the first n whose interval fits between the mean and the nearer bound", "[unit]") {
  // Mean 6%, sd 4%, bound 10%: room 4%; t(n-1) x 4 / sqrt(n) < 4 first at n = 7 (2.447 / 2.646 = 0.925;
  // n = 6: 2.571 / 2.449 = 1.05).
  const ErrorInterval e{6, 0, 12, 4, 3};
  CHECK(repeats_to_decide(e, 10) == 7);
  // A mean on the bound leaves no room: no number of repeats decides.
  CHECK(repeats_to_decide(ErrorInterval{10, 5, 15, 4, 3}, 10) == 0);
  CHECK(t95(1) == Approx(12.706));
  CHECK(t95(1000) == Approx(1.960));
}

TEST_CASE("paired errors cancel a drift that moves both sides of each pair", "[unit]") {
  // The host slows 1.0x, 1.2x, 1.4x during the repeats; the simulation of each repeat follows it.
  const std::vector<double> measured = {1.0, 1.2, 1.4}, simulated = {1.05, 1.26, 1.47};
  const auto paired = paired_error_interval(measured, simulated);
  CHECK(paired.mean_pct == Approx(5.0));
  CHECK(paired.high_pct - paired.low_pct < 1e-9);
  // Against one simulated time the same measurements give a wide interval.
  const auto fixed = error_interval(measured, 1.26);
  CHECK(fixed.high_pct - fixed.low_pct > 30);
  CHECK(paired_error_interval({}, {}).samples == 0);
}

TEST_CASE("stolen CPU time comes from /proc/stat's cpu line, and a missing or short one is unknown", "[unit]") {
  const auto file = std::filesystem::temp_directory_path() / "exasim_noise_test_stat";
  const auto write = [&](const std::string& text) { std::ofstream(file) << text; };
  write("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 50 0 25 400 5 0 0 20 0 0\n");
  const auto before = read_cpu_counters(file.string());
  REQUIRE(before.valid);
  CHECK(before.total == 1000);
  CHECK(before.steal == 40);
  write("cpu  150 0 60 900 10 0 0 120 0 0\n");
  const auto after = read_cpu_counters(file.string());
  CHECK(steal_pct(before, after) == Approx(100.0 * 80 / 240));  // 80 of 240 ticks stolen
  CHECK(steal_pct(before, before) == -1);                       // no time passed
  write("cpu  150 0 60 900\n");
  CHECK_FALSE(read_cpu_counters(file.string()).valid);
  CHECK(steal_pct(before, read_cpu_counters(file.string())) == -1);
  std::filesystem::remove(file);
  CHECK_FALSE(read_cpu_counters(file.string()).valid);
}

TEST_CASE("the runs kept are the least disturbed, in run order", "[unit]") {
  using V = std::vector<std::size_t>;
  CHECK(validate::least_disturbed({12, 3, 20, 1}, 5) == V{0, 1, 2, 3});  // no more ran than are kept
  CHECK(validate::least_disturbed({12, 3, 20, 1, 9}, 3) == V{1, 3, 4});
  CHECK(validate::least_disturbed({5, 5, 5, 5}, 2) == V{0, 1});    // the earlier of equals
  CHECK(validate::least_disturbed({-1, 4, -1, 2}, 2) == V{0, 2});  // unknown counts as none
  CHECK(validate::least_disturbed({}, 3).empty());
}

TEST_CASE("disturbed runs are run again, up to twice the runs kept", "[unit]") {
  const auto run = [](std::vector<double> stolen, std::size_t keep, double bound) {
    std::size_t calls = 0;
    auto q = validate::run_until_quiet(keep, bound, [&] { return stolen.at(calls++); });
    CHECK(calls == q.steal_pct.size());
    return q;
  };
  using B = std::vector<bool>;
  // Quiet from the start: exactly `keep` runs.
  auto q = run({1, 2, 3, 99}, 3, 8);
  CHECK(q.steal_pct == std::vector<double>{1, 2, 3});
  CHECK(q.kept == B{true, true, true});
  // One disturbed: one more run, the disturbed one dropped.
  q = run({1, 20, 3, 4, 99}, 3, 8);
  CHECK(q.kept == B{true, false, true, true});
  // Every run disturbed: stops at twice `keep` and keeps the least disturbed of them.
  q = run({30, 20, 25, 40, 99}, 2, 8);
  CHECK(q.steal_pct.size() == 4);
  CHECK(q.kept == B{false, true, true, false});
  // A bound of 100 never runs again; unknown counters (-1) count as quiet.
  CHECK(run({50, 60, 99}, 2, 100).steal_pct.size() == 2);
  CHECK(run({-1, -1, 99}, 2, 0).steal_pct.size() == 2);
}

TEST_CASE("a fit pools the kept runs the hypervisor left alone, all of them only when none was", "[unit]") {
  using B = std::vector<bool>;
  QuietRuns q;
  // Three kept after three dropped, one of the kept at 31%: the two quiet ones are pooled.
  q.steal_pct = {31, 3.2, 2.7, 35, 37, 36};
  q.kept = {true, true, true, false, false, false};
  auto p = runs_to_pool(q, 15);
  CHECK(p.pooled == B{false, true, true, false, false, false});
  CHECK_FALSE(p.disturbed);
  // Every kept run disturbed: all of them, and said.
  q.steal_pct = {20, 40, 25, 30};
  q.kept = {true, false, true, false};
  p = runs_to_pool(q, 15);
  CHECK(p.pooled == B{true, false, true, false});
  CHECK(p.disturbed);
  // The bound is inclusive; unknown counters (-1) count as quiet.
  q.steal_pct = {15, -1};
  q.kept = {true, true};
  p = runs_to_pool(q, 15);
  CHECK(p.pooled == B{true, true});
  CHECK_FALSE(p.disturbed);
}
