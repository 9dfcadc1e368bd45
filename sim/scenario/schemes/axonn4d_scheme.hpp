#pragma once
// AxoNN's 4D tensor parallelism (schedule/axonn4d.hpp, docs/axonn.md) as an entry of the scheme table.
// Its config is a schedule::Axonn4DConfig (parallel_as<schedule::Axonn4DConfig>); tune walks every grid
// of the GPU count with the scenario's recompute mode, and `exasim place` scores its placements (every
// rank of a 4D plan runs the same stream).
//
// LIMITATIONS: the analytic estimate is one rank's replay (sim/tune/analytic.hpp), extrapolated from
// plans of 1 and 2 layers; recompute is the scenario's, not searched.

#include "sim/scenario/scheme.hpp"

#include <cstdint>
#include <vector>

namespace exasim::scenario {

/// `parallel`: {"scheme": "axonn4d", "gx", "gy", "gz", "gdata"}, each >= 1 (default 1), product = gpus.
[[nodiscard]] Scheme axonn4d_scheme();

/// Every (gx, gy, gz, gdata) with gx*gy*gz*gdata = gpus, in lexicographic order.
[[nodiscard]] std::vector<schedule::Axonn4DConfig> axonn4d_grids(std::uint32_t gpus);

}  // namespace exasim::scenario
