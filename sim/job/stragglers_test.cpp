#include "sim/job/stragglers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace exasim::job;

TEST_CASE("straggler counts round to nearest with at least one", "[unit]") {
  CHECK(straggler_count(16384, 0.001) == 16);  // 16.384 rounds to 16
  CHECK(straggler_count(16, 0.0001) == 1);     // any positive fraction slows one GPU
  CHECK(straggler_count(16, 0) == 0);
  CHECK(straggler_count(16, 1) == 16);
}

TEST_CASE("stragglers are drawn deterministically from the seed", "[unit]") {
  const auto a = straggler_factors(1000, 0.01, 1.5, 7);
  const auto b = straggler_factors(1000, 0.01, 1.5, 7);
  const auto c = straggler_factors(1000, 0.01, 1.5, 8);
  REQUIRE(a.size() == 1000);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(std::count(a.begin(), a.end(), 1.5) == 10);
  CHECK(std::count(a.begin(), a.end(), 1.0) == 990);
  CHECK(straggler_factors(1000, 0, 1.5, 7).empty());
  CHECK(straggler_factors(1000, 0.1, 1.0, 7).empty());
}
