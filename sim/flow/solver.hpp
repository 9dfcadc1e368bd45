#pragma once
// The choice of max-min solver of FlowNetwork (flow_network.hpp), apart so that runtime options can
// name it without the network's header.

#include <cstdint>

namespace exasim::flow {

/// How FlowNetwork re-solves rates after a change; all three give the same max-min rates.
enum class Solver : std::uint8_t {
  /// Default: progressive filling of only the paths whose rates can change, the others held, joining
  /// as the filling finds they must (local_solve.cpp); rates equal to Components' within 1e-13.
  Local,
  /// Every connected component of the changed links (bit for bit Reference's rates).
  Components,
  /// Every active flow at every change, all links, no shortcuts: what tests hold the others against.
  Reference,
};

}  // namespace exasim::flow
