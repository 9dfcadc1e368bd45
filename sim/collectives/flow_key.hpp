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

/// Ring hop `position` of the `sequence`-th collective (0-based, in posting order) of group `group`
/// along grid dimension `dim`.
[[nodiscard]] constexpr std::uint64_t collective_flow_key(std::uint64_t seed, std::uint32_t dim, std::uint32_t group,
                                                          std::uint32_t sequence, std::uint32_t position) {
  return mix64(mix64(mix64(seed ^ (std::uint64_t{dim} << 56) ^ group) ^ sequence) ^ position);
}

/// The `sequence`-th Send/Recv transfer (0-based) from rank `sender` to rank `receiver`.
[[nodiscard]] constexpr std::uint64_t p2p_flow_key(std::uint64_t seed, std::uint32_t sender, std::uint32_t receiver,
                                                   std::uint32_t sequence) {
  constexpr std::uint64_t kP2pTag = 0x5032500000000000ULL;  // keeps p2p keys apart from collective keys
  return mix64(mix64(seed ^ kP2pTag ^ (std::uint64_t{sender} << 32 | receiver)) ^ sequence);
}

}  // namespace exasim::collectives
