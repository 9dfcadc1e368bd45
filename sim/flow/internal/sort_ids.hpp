#pragma once
// Sorting the ids of the flows a re-solve changed, so that their predictions go out in id order.
//
// Large runs re-predict thousands of flows per re-solve (a data-parallel ring across 256 nodes ties
// the flows of all of them into one component), and their ids come in free-list order: the counting
// passes of an LSD radix sort (11-bit digits, as many passes as the largest id needs: two below four
// million flows) cost less there than std::sort's n log n comparisons. Short lists keep std::sort.
// The result is the same either way: ids are distinct integers.
//
// LIMITATIONS: one scratch array of the same length.

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace exasim::flow {

inline void sort_ids(std::vector<std::uint32_t>& ids, std::vector<std::uint32_t>& scratch) {
  constexpr std::size_t kRadixFrom = 512;  // below this, std::sort is as fast
  constexpr unsigned kBits = 11;
  constexpr std::uint32_t kMask = (1u << kBits) - 1;
  if (ids.size() < kRadixFrom) {
    std::sort(ids.begin(), ids.end());
    return;
  }
  const std::uint32_t largest = *std::max_element(ids.begin(), ids.end());
  scratch.resize(ids.size());
  for (unsigned shift = 0; shift < 32 && (largest >> shift) != 0; shift += kBits) {
    std::array<std::uint32_t, kMask + 1> start{};
    for (const std::uint32_t id : ids) ++start[(id >> shift) & kMask];
    std::uint32_t sum = 0;
    for (std::uint32_t& s : start) sum += std::exchange(s, sum);
    for (const std::uint32_t id : ids) scratch[start[(id >> shift) & kMask]++] = id;
    ids.swap(scratch);
  }
}

}  // namespace exasim::flow
