#include "sim/job/stragglers.hpp"

#include "sim/core/hash.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace exasim::job {

std::uint32_t straggler_count(std::uint32_t ranks, double fraction) {
  if (!(fraction > 0) || ranks == 0) return 0;
  const auto n = static_cast<std::uint32_t>(std::llround(fraction * ranks));
  return std::clamp<std::uint32_t>(n, 1, ranks);
}

std::vector<double> straggler_factors(std::uint32_t ranks, double fraction, double slowdown, std::uint64_t seed) {
  const std::uint32_t count = straggler_count(ranks, fraction);
  if (count == 0 || slowdown == 1) return {};
  std::vector<std::uint32_t> order(ranks);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 rng(seed);
  // The first `count` places of a partial Fisher-Yates shuffle: a uniform draw without replacement.
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto j = i + static_cast<std::uint32_t>(rng.next() % (ranks - i));
    std::swap(order[i], order[j]);
  }
  std::vector<double> factors(ranks, 1.0);
  for (std::uint32_t i = 0; i < count; ++i) factors[order[i]] = slowdown;
  return factors;
}

}  // namespace exasim::job
