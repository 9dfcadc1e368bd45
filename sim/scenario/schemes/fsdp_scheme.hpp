#pragma once
// FSDP / ZeRO-3 fully sharded data parallelism (schedule/fsdp.hpp, docs/fsdp.md) as an entry of the
// scheme table. Its config is a schedule::FsdpConfig (parallel_as<schedule::FsdpConfig>); tune walks the
// shard sizes that are whole nodes (up to every GPU), the micro-batch, resharding after forward and
// recomputation; `exasim place` scores its placements (every rank runs the same stream).
//
// LIMITATIONS: the analytic estimate is one rank's replay of every layer, for one and two micro-batches
// extended linearly (no contention between the shard and replica groups); tune keeps `prefetch` as the
// scenario has it (on for a scenario of another scheme) and searches no shard group smaller than a node.

#include "sim/scenario/scheme.hpp"
#include "sim/schedule/fsdp.hpp"

#include <cstdint>
#include <vector>

namespace exasim::scenario {

/// `parallel`: {"scheme": "fsdp", "shard" (default: gpus, full sharding; a divisor of gpus below it:
/// hybrid sharding), "micro_batch" (default: global_batch / gpus, one micro-batch), "prefetch" (default
/// true), "reshard_after_forward" (default true)}.
[[nodiscard]] Scheme fsdp_scheme();

/// The shard sizes tune walks on `gpus` GPUs of `gpus_per_node` each: the divisors of gpus that are whole
/// nodes, ascending (gpus itself when the job is smaller than a node).
[[nodiscard]] std::vector<std::uint32_t> fsdp_shard_sizes(std::uint32_t gpus, std::uint32_t gpus_per_node);

}  // namespace exasim::scenario
