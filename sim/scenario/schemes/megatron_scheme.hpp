#pragma once
// Megatron-LM's 3D parallelism (schedule/megatron.hpp) as an entry of the scheme table.

#include "sim/scenario/scheme.hpp"
#include "sim/schedule/axonn4d.hpp"  // Infeasibility

namespace exasim::scenario {

/// `parallel`: {"scheme": "megatron", "tp", "pp", "dp", "zero", "micro_batch", "virtual_stages",
/// "sequence_parallel", "scatter_gather", "grad_accumulation_fusion"}; tp*pp*dp = gpus.
[[nodiscard]] Scheme megatron_scheme();

/// Why `s.megatron` cannot be loaded for `s` (model, training, GPUs): megatron_infeasibility, then the
/// plan-size bound (micro-batches x layers <= kMaxLayerPasses, blamed on training.global_batch). Empty
/// `why` when it can. The loader and `exasim tune`'s search refuse with this one check.
[[nodiscard]] schedule::Infeasibility megatron_refusal(const Scenario& s);

}  // namespace exasim::scenario
