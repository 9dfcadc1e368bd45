#pragma once
// The choice of max-min solver of FlowNetwork (flow_network.hpp), apart so that runtime options can
// name it without the network's header.

#include <cstdint>

namespace exasim::flow {

/// How FlowNetwork re-solves rates after a change; all three give the same max-min rates.
enum class Solver : std::uint8_t {
  /// Default: only the paths whose bottleneck the change touched, grown until the max-min condition
  /// holds everywhere it could break (rates equal to Components' up to rounding, ~1e-15).
  Local,
  /// Every connected component of the changed links (bit for bit Reference's rates).
  Components,
  /// Every active flow at every change, all links, no shortcuts: what tests hold the others against.
  Reference,
};

}  // namespace exasim::flow
