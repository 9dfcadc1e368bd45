#include "sim/report/trace_collector.hpp"

#include <catch2/catch.hpp>

using namespace exasim;

TEST_CASE("a trace row's group is its grid group's first member", "[unit]") {
  schedule::Plan plan;
  plan.grid = schedule::ProcessGrid({{"x", 2}, {"y", 3}});  // x fastest: rank = x + 2 y
  const auto group = report::group_of(plan);
  CHECK(group(0, "x") == 0);
  CHECK(group(1, "x") == 0);
  CHECK(group(5, "x") == 4);
  CHECK(group(5, "y") == 1);  // ranks 1, 3, 5
  CHECK(group(2, "y") == 0);  // ranks 0, 2, 4
  CHECK(group(3, "nope") == 3);
}
