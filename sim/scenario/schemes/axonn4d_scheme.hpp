#pragma once
// AxoNN's 4D tensor parallelism (schedule/axonn4d.hpp, docs/axonn.md) as an entry of the scheme table.

#include "sim/scenario/scheme.hpp"

namespace exasim::scenario {

/// `parallel`: {"scheme": "axonn4d", "gx", "gy", "gz", "gdata"}, each >= 1 (default 1), product = gpus.
[[nodiscard]] Scheme axonn4d_scheme();

}  // namespace exasim::scenario
