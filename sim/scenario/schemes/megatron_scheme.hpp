#pragma once
// Megatron-LM's 3D parallelism (schedule/megatron.hpp) as an entry of the scheme table.

#include "sim/scenario/scheme.hpp"

namespace exasim::scenario {

/// `parallel`: {"scheme": "megatron", "tp", "pp", "dp", "zero", "micro_batch", "virtual_stages",
/// "sequence_parallel", "scatter_gather", "grad_accumulation_fusion"}; tp*pp*dp = gpus.
[[nodiscard]] Scheme megatron_scheme();

}  // namespace exasim::scenario
