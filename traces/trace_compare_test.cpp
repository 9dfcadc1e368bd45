#include "traces/trace_compare.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace exasim::trace;

namespace {

DeviceKernel kernel(double start_us, double dur_us, KernelClass cls, CollectiveKind coll = CollectiveKind::Other,
                    double bytes = -1) {
  DeviceKernel k;
  k.start_us = start_us;
  k.dur_us = dur_us;
  k.cls = cls;
  k.coll = coll;
  k.bytes = bytes;
  return k;
}

}  // namespace

TEST_CASE("size bands are powers of 16 from 64 KiB", "[unit]") {
  CHECK(size_band(-1) == "unknown");
  CHECK(size_band(65535) == "<64KiB");
  CHECK(size_band(65536) == "64KiB-1MiB");
  CHECK(size_band(1 << 20) == "1MiB-16MiB");
  CHECK(size_band(16 << 20) == "16MiB-256MiB");
  CHECK(size_band(256.0 * (1 << 20)) == ">=256MiB");
}

// Measured: two steps of 100 us; step 1 holds a gemm of 30 us and an 8 MiB all-reduce of 20 us, step 2 a
// gemm of 10 us; a kernel after the last step is left out. Per step: gemm (30+10)/2 = 20 us, all-reduce
// 20/2 = 10 us and 0.5 of a call; busy (50 + 10)/2 = 30 us (the two kernels of step 1 do not overlap).
// Simulated: a 60 us iteration with a 25 us gemm and two 8 MiB all-reduces of 5 us each.
TEST_CASE("compare takes measured means per step and matches collectives by kind and band", "[unit]") {
  MeasuredTrace m;
  m.source = "measured.json";
  m.names = {"k"};
  m.steps = {{"ProfilerStep#1", 0, 100}, {"ProfilerStep#2", 100, 100}};
  m.kernels = {kernel(0, 30, KernelClass::Gemm),
               kernel(30, 20, KernelClass::Collective, CollectiveKind::AllReduce, 8 << 20),
               kernel(100, 10, KernelClass::Gemm), kernel(300, 50, KernelClass::Gemm)};
  MeasuredTrace s;
  s.names = {"k"};
  s.kernels = {kernel(0, 25, KernelClass::Gemm),
               kernel(25, 5, KernelClass::Collective, CollectiveKind::AllReduce, 8 << 20),
               kernel(30, 5, KernelClass::Collective, CollectiveKind::AllReduce, 8 << 20)};
  const auto c = compare({m}, s, 60e-6, "scenario.json");
  CHECK(c.measured_steps == 2);
  CHECK(c.measured_step_s == Approx(100e-6));
  CHECK(c.simulated_iteration_s == 60e-6);
  CHECK(c.measured_busy_s == Approx(30e-6));
  CHECK(c.simulated_busy_s == Approx(35e-6));
  REQUIRE(c.classes.size() == 5);
  CHECK(c.classes[0].name == "gemm");
  CHECK(c.classes[0].measured_s == Approx(20e-6));
  CHECK(c.classes[0].simulated_s == Approx(25e-6));
  REQUIRE(c.collectives.size() == 1);
  CHECK(c.collectives[0].name == "all_reduce 1MiB-16MiB");
  CHECK(c.collectives[0].measured_s == Approx(10e-6));
  CHECK(c.collectives[0].measured_count == 0.5);
  CHECK(c.collectives[0].simulated_count == 2);
  CHECK(c.collectives[0].simulated_s == Approx(10e-6));
  const auto j = to_json(c);
  CHECK(j["collectives"]["all_reduce 1MiB-16MiB"]["simulated_count"] == 2.0);

  // Side by side: measured process first (its first step at 0), then one process per simulated rank.
  const auto path = (std::filesystem::temp_directory_path() / "exasim_compare_test_side.json").string();
  write_side_by_side(path, {m}, {{0, "L0.qkv.fwd.gemm", "gemm", "", 0, 0, 0.0, 25e-6}});
  const auto doc = nlohmann::json::parse(std::ifstream(path));
  int measured_kernels = 0, simulated = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["pid"] == 1 && e["cat"] != "step") ++measured_kernels;
    if (e["pid"] == 2) ++simulated;
  }
  CHECK(measured_kernels == 4);
  CHECK(simulated == 1);
}
