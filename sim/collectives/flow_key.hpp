#pragma once
// Flow keys that say what a flow is, not when it was launched.
//
// Topology::route() picks among parallel paths (the global link of a group pair, the Valiant
// intermediate group) by hashing a flow key. If the key counted launches in the simulator's order,
// two simulators that break ties between simultaneous launches differently would route the same
// flow differently. These keys depend only on the flow's identity, so every runtime that uses them
// routes every flow the same way: the fast flow core and the SimGrid runtime both key flows here.

#include "sim/core/hash.hpp"

#include <cstdint>

namespace exasim::collectives {

/// What the hops of the `sequence`-th collective (0-based, in posting order) of group `group` along
/// grid dimension `dim` share: computed once per collective, not once per hop.
[[nodiscard]] constexpr std::uint64_t collective_call_key(std::uint64_t seed, std::uint32_t dim, std::uint32_t group,
                                                          std::uint32_t sequence) {
  return mix64(mix64(seed ^ (std::uint64_t{dim} << 56) ^ group) ^ sequence);
}

/// Hop `position` of the collective of `call_key` (collective_call_key). A ring's hop k has position
/// k (hop_position gives the other algorithms' hops).
[[nodiscard]] constexpr std::uint64_t collective_flow_key(std::uint64_t call_key, std::uint32_t position) {
  return mix64(call_key ^ position);
}

/// The same in one call: hop `position` of the `sequence`-th collective of group `group` along `dim`.
[[nodiscard]] constexpr std::uint64_t collective_flow_key(std::uint64_t seed, std::uint32_t dim, std::uint32_t group,
                                                          std::uint32_t sequence, std::uint32_t position) {
  return collective_flow_key(collective_call_key(seed, dim, group, sequence), position);
}

/// Algorithms other than ring, for hop_position.
enum class PositionTag : std::uint32_t { Nccl = 0, Tree = 1, Hierarchical = 2, Direct = 3 };

/// The position of hop `index` (counted over the stage's bundles) of stage `stage` (0 .. 3) of an
/// algorithm other than ring. Bit 31 is set, so it never equals a ring's position (k < p < 2^31); the
/// tag and stage keep the algorithms and stages apart; index takes 27 bits and wraps beyond 2^27 hops
/// (a direct stage of more than 11,585 members: keys then repeat, routes stay valid).
[[nodiscard]] constexpr std::uint32_t hop_position(PositionTag tag, std::uint32_t stage, std::uint32_t index) {
  return 0x8000'0000u | static_cast<std::uint32_t>(tag) << 29 | (stage & 3u) << 27 | (index & 0x07FF'FFFFu);
}

/// The `sequence`-th Send/Recv transfer (0-based) from rank `sender` to rank `receiver`.
[[nodiscard]] constexpr std::uint64_t p2p_flow_key(std::uint64_t seed, std::uint32_t sender, std::uint32_t receiver,
                                                   std::uint32_t sequence) {
  constexpr std::uint64_t kP2pTag = 0x5032500000000000ULL;  // keeps p2p keys apart from collective keys
  return mix64(mix64(seed ^ kP2pTag ^ (std::uint64_t{sender} << 32 | receiver)) ^ sequence);
}

}  // namespace exasim::collectives
