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
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllGather, 65536, 4) == &rows[1]);
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllGather, 1048576, 4) == &rows[1]);
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllGather, 1048577, 4) == &rows[0]);
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllReduce, 65536, 4) == &rows[2]);
  REQUIRE(collectives::find_step_cost(rows, CollKind::ReduceScatter, 65536, 4) == nullptr);
  REQUIRE(collectives::find_step_cost(rows, CollKind::AllGather, 2e12, 4) == nullptr);
  REQUIRE(collectives::find_step_cost({}, CollKind::AllReduce, 1, 4) == nullptr);
}

TEST_CASE("rows of a collective's own group size come first, rows of any size otherwise", "[unit]") {
  const std::vector<collectives::StepCost> rows = {
      {CollKind::AllReduce, 1e12, 1e-4, 1.0, 0},
      {CollKind::AllReduce, 1048576, 2e-4, 1.0, 0},
      {CollKind::AllReduce, 1e12, 3e-4, 0.9, 2},
      {CollKind::AllGather, 1e12, 4e-4, 1.0, 2},
  };
  CHECK(collectives::find_step_cost(rows, CollKind::AllReduce, 65536, 2) == &rows[2]);  // sized, though wider
  CHECK(collectives::find_step_cost(rows, CollKind::AllReduce, 65536, 4) == &rows[1]);  // no 4-member row
  CHECK(collectives::find_step_cost(rows, CollKind::AllReduce, 4e6, 8) == &rows[0]);
  CHECK(collectives::find_step_cost(rows, CollKind::AllGather, 65536, 2) == &rows[3]);
  CHECK(collectives::find_step_cost(rows, CollKind::AllGather, 65536, 4) == nullptr);  // sized only: none
  CHECK(collectives::find_step_cost(rows, CollKind::AllReduce, 2e12, 2) == nullptr);   // beyond its sized band
}
