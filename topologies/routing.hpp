#pragma once
// Routing policies and the hash every topology uses to pick among equal paths.
//
// Path choices are pure functions of (seed, flow_key, src, dst) and, for adaptive policies, of the
// loads the caller shows: the same inputs give the same route on every run and every machine.
//
// LIMITATIONS:
//  - hashing spreads flows over equal paths evenly only on average: 1,024 flows over 4 parallel links
//    do not land exactly 256 per link (real ECMP has the same imbalance).

#include <cstdint>
#include <string_view>

#include "sim/core/hash.hpp"

namespace exasim::topo {

/// Minimal: shortest paths, parallel links picked by hash. Valiant: through a random intermediate
/// (dragonfly). Adaptive: per flow, the less loaded of a minimal and a non-minimal candidate
/// (dragonfly) or the least loaded up-link at each level (fat tree).
enum class RoutingPolicy : std::uint8_t { Minimal, Valiant, Adaptive };
[[nodiscard]] std::string_view to_string(RoutingPolicy p);

/// splitmix64 finaliser (sim/core/hash.hpp), under the name the topologies use.
[[nodiscard]] constexpr std::uint64_t mix(std::uint64_t x) { return mix64(x); }

/// flow_hash() of a seed already mixed (mix(seed)): a topology's seed is fixed, and routing runs per flow.
[[nodiscard]] constexpr std::uint64_t flow_hash_of_mixed_seed(std::uint64_t mixed_seed, std::uint64_t flow_key,
                                                              std::uint32_t src, std::uint32_t dst) {
  return mix(mixed_seed ^ flow_key ^ mix((std::uint64_t{src} << 32) | dst));
}

/// The per-flow hash all path choices derive from.
[[nodiscard]] constexpr std::uint64_t flow_hash(std::uint64_t seed, std::uint64_t flow_key, std::uint32_t src,
                                                std::uint32_t dst) {
  return flow_hash_of_mixed_seed(mix(seed), flow_key, src, dst);
}

}  // namespace exasim::topo
