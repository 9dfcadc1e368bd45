#pragma once
// splitmix64 (Steele, Lea and Flood 2014): the one mixer behind every seeded choice in exasim (route
// picks, flow keys, random placement). Written out here rather than taken from <random>, whose
// distributions differ between standard libraries: the same seed must give the same outputs everywhere.

#include <cstdint>

namespace exasim {

inline constexpr std::uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ULL;

/// splitmix64 finaliser: cheap, and every input bit moves every output bit.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t x) {
  x += kSplitMixGamma;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The splitmix64 generator: mix64(seed), mix64(seed + gamma), mix64(seed + 2 gamma), ...
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(std::uint64_t seed) : state_(seed) {}
  constexpr std::uint64_t next() {
    const std::uint64_t value = mix64(state_);
    state_ += kSplitMixGamma;
    return value;
  }

 private:
  std::uint64_t state_;
};

}  // namespace exasim
