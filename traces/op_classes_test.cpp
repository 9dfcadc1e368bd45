#include "traces/op_classes.hpp"

#include <catch2/catch.hpp>

using namespace exasim;

TEST_CASE("op class times are sums per class, averaged over the trace's ranks", "[unit]") {
  const std::vector<trace::TraceRow> rows = {
      {0, "a.gemm", "gemm", "", 0, 1, 0.0, 1.0},   {1, "a.gemm", "gemm", "", 0, 1, 0.0, 3.0},
      {1, "a.norm", "memory", "", 8, 0, 3.0, 3.5}, {0, "a.ar", "all_reduce", "x", 8, 0, 1.0, 2.0},
      {0, "a.ar", "wait", "x", 8, 0, 1.5, 2.0},    {1, "a.ag", "all_gather", "y", 8, 0, 3.0, 3.5}};
  const auto times = trace::op_class_times(rows);
  REQUIRE(times.size() == 4);
  CHECK(times.at("compute") == Approx((1.0 + 3.0 + 0.5) / 2));
  CHECK(times.at("all_reduce.x") == Approx(0.5));  // one rank's 1 s over two ranks
  CHECK(times.at("all_gather.y") == Approx(0.25));
  CHECK(times.at("exposed_comm") == Approx(0.25));
  CHECK(trace::op_class_times({}).empty());
}
