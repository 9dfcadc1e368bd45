#pragma once
// The divisors the schemes' tune enumerations walk.

#include <cstdint>
#include <vector>

namespace exasim::scenario {

/// The divisors of n up to 2^32 - 1, ascending (trial division up to sqrt n: global_batch may be 2^40).
[[nodiscard]] inline std::vector<std::uint32_t> divisors(std::uint64_t n) {
  std::vector<std::uint32_t> low, high;
  for (std::uint64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(static_cast<std::uint32_t>(d));
    if (d != n / d && n / d <= UINT32_MAX) high.push_back(static_cast<std::uint32_t>(n / d));
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

}  // namespace exasim::scenario
