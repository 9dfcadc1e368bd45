#include "sim/collectives/step_costs.hpp"

#include <catch2/catch.hpp>

using namespace exasim;
using schedule::CollKind;

TEST_CASE("a step-cost row covers its kind up to its size, the smallest band first", "[unit]") {
  const std::vector<collectives::StepCost> rows = {
      {CollKind::AllGather, 1e12, 2e-4, 0.8},
      {CollKind::AllGather, 1048576, 3e-4, 0.5},
      {CollKind::AllReduce, 1e12, 1e-4, 1.1},
  };
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllGather, 65536) == &rows[1]);
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllGather, 1048576) == &rows[1]);
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllGather, 1048577) == &rows[0]);
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllReduce, 65536) == &rows[2]);
  REQUIRE(collectives::find_step_cost(rows, CollKind::ReduceScatter, 65536) == nullptr);
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllGather, 2e12) == nullptr);
  REQUIRE(collectives::find_step_cost({}, CollKind::AllReduce, 1) == nullptr);
}
