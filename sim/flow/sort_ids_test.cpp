#include "sim/flow/internal/sort_ids.hpp"

#include <catch2/catch.hpp>

using namespace exasim;

TEST_CASE("sort_ids sorts like std::sort, short and long, small ids and large", "[unit]") {
  std::uint64_t seed = 7;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(seed >> 32);
  };
  std::vector<std::uint32_t> scratch;
  for (std::size_t n : {0u, 1u, 100u, 511u, 512u, 5000u, 70000u}) {
    for (std::uint32_t range : {1000u, 1u << 22, 0xffffffffu}) {  // one, two and three radix passes
      // Distinct ids, as the solvers' are: a shuffled sample of [0, range).
      std::vector<std::uint32_t> ids(n);
      for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::uint32_t>(i * (range / (n + 1) + 1));
      for (std::size_t i = n; i > 1; --i) std::swap(ids[i - 1], ids[next() % i]);
      auto expected = ids;
      std::sort(expected.begin(), expected.end());
      flow::sort_ids(ids, scratch);
      INFO("n = " << n << ", ids below " << range);
      CHECK(ids == expected);
    }
  }
}
