#include "validate/compare.hpp"

#include <catch2/catch.hpp>

using namespace exasim;

TEST_CASE("op classes are mean-over-ranks sums, compared class by class", "[unit]") {
  std::vector<trace::TraceRow> measured = {{0, "a.gemm", "gemm", "", 0, 1, 0.0, 1.0},
                                           {1, "a.gemm", "gemm", "", 0, 1, 0.0, 3.0},
                                           {0, "a.ar", "all_reduce", "x", 8, 0, 1.0, 2.0},
                                           {0, "a.ar", "wait", "x", 8, 0, 1.5, 2.0},
                                           {1, "a.ar", "all_reduce", "x", 8, 0, 3.0, 3.5}};
  std::vector<trace::TraceRow> simulated = {{0, "a.gemm", "gemm", "", 0, 1, 0.0, 2.0},
                                            {1, "a.gemm", "gemm", "", 0, 1, 0.0, 2.0},
                                            {0, "a.ar", "all_reduce", "x", 8, 0, 2.0, 2.5},
                                            {1, "a.ar", "all_reduce", "x", 8, 0, 2.0, 2.5}};
  auto times = trace::op_class_times(measured);
  CHECK(times["compute"] == Approx(2.0));
  CHECK(times["all_reduce.x"] == Approx(0.75));
  CHECK(times["exposed_comm"] == Approx(0.25));
  auto classes = validate::compare_classes(measured, simulated);
  REQUIRE(classes.size() == 3);
  CHECK(classes.front().op_class == "compute");
  CHECK(classes.front().error_pct == Approx(0.0));
  CHECK(classes[1].op_class == "all_reduce.x");
  CHECK(classes[1].error_pct == Approx(100.0 * (0.5 - 0.75) / 0.75));
  CHECK(classes.back().op_class == "exposed_comm");
  CHECK(classes.back().simulated_s == 0);
  CHECK(validate::error_pct(0, 0) == 0);
}
