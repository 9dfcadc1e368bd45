#pragma once
// Megatron-LM's 3D parallelism (schedule/megatron.hpp) as an entry of the scheme table. Its config is a
// schedule::MegatronConfig (parallel_as<schedule::MegatronConfig>); tune walks tp x cp x pp x dp with the
// ZeRO stage, micro-batch, virtual stages, sequence parallelism and recompute (megatron_estimate.cpp prices
// them); for a mixture of experts also ep, over the divisors of dp x cp that divide the experts.
//
// LIMITATIONS: tune keeps scatter_gather, grad_accumulation_fusion, tp_comm_overlap and cp_comm as the
// scenario has them (defaults for a scenario of another scheme); micro-batch sizes are every divisor of
// global_batch, virtual stages every divisor of layers, CP degrees the powers of two up to 16 that the
// sequence allows (flash attention only). `exasim place` does not score it, with or without context
// parallelism (its stages run different streams): it refuses the scenario naming parallel.scheme.

#include "sim/scenario/scheme.hpp"

namespace exasim::scenario {

/// `parallel`: {"scheme": "megatron", "tp", "cp", "pp", "dp", "zero", "micro_batch", "virtual_stages",
/// "sequence_parallel", "scatter_gather", "grad_accumulation_fusion", "tp_comm_overlap", "cp_comm", "ep",
/// "etp"}; tp*cp*pp*dp = gpus; ep (default 1) and etp (default tp) for a mixture of experts.
[[nodiscard]] Scheme megatron_scheme();

/// The analytic estimate of a Megatron configuration (megatron_estimate.cpp).
[[nodiscard]] std::unique_ptr<SchemeEstimate> make_megatron_estimate();

}  // namespace exasim::scenario
