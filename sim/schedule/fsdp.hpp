#pragma once
// The FSDP / ZeRO-3 plan: fully sharded data parallelism as PyTorch FSDP (FULL_SHARD, HYBRID_SHARD;
// FSDP2's fully_shard, torchtitan's default) and DeepSpeed ZeRO-3 run it (Zhao et al., "PyTorch FSDP",
// VLDB 2023; Rajbhandari et al., SC20).
//
// Every GPU runs the whole model on its own sequences; the parameters, gradients and optimizer state are
// sharded over a group of `shard` GPUs. Rank layout: shard fastest, then replica,
//   rank = replica * shard + shard_rank,
// so a shard group is `shard` consecutive ranks (a node when shard = GPUs per node) and the replica
// group of a rank is the ranks at the same position of the other groups. shard = GPUs: full sharding
// (FULL_SHARD, ZeRO-3); shard < GPUs: hybrid sharding (HYBRID_SHARD, FSDP2's 2D device mesh), the
// sharded state replicated over GPUs / shard replicas. Every rank runs the same stream (one role).
//
// Units, as FSDP wraps a transformer (torchtitan's apply_fsdp: each block, the embedding, the output):
// the word embedding, each layer, and the final norm with the LM head. A tied word embedding is one
// parameter shared by the first and last unit, so FSDP keeps it in their common parent, the root: one
// unit gathered before the forward and kept until its gradient is final after the embedding's backward.
//
// One iteration: m = global_batch / (GPUs * micro_batch) micro-batches, each:
//  - forward, unit by unit: all-gather of the unit's parameters (math type, training.dtype) over the
//    shard group, then its compute (the same kernels as a Megatron layer with tp = 1,
//    internal/layer_kernels.hpp); with `prefetch` (FSDP's forward_prefetch, FSDP2's implicit prefetch)
//    the next unit's all-gather is posted before the current unit's compute, so it runs beneath it;
//  - backward, in reverse: all-gather of the unit's parameters again (reshard_after_forward true:
//    ZeRO-3, FULL_SHARD) or nothing (false: the parameters stay gathered from forward to backward,
//    SHARD_GRAD_OP, ZeRO-2-like), posted one unit ahead with `prefetch` (BACKWARD_PRE: before the
//    current unit's gradient computation); full recomputation reruns the unit's forward on those
//    gathered parameters; then the unit's compute and a reduce-scatter of its gradients
//    (training.dp_grad_bytes per element, FSDP's reduce_dtype) over the shard group, left in flight;
//    hybrid sharding then all-reduces the reduced shard over the replica group, posted once the next
//    unit's backward has been issued (the reduce-scatter had that long to finish). The LM head unit is
//    never resharded between its forward and its backward (torchtitan's reshard_after_forward=False
//    for the last unit: the backward would gather it at once). Every reduction is waited for at the
//    end of the micro-batch's backward;
//  - after the last micro-batch: Adam on the local shard, 1/shard of the parameters.
//
// LIMITATIONS:
//  - no tensor parallelism inside the node (torchtitan's 2D FSDP + TP), no context parallelism;
//  - every micro-batch gathers and reduce-scatters again (FSDP's default; no_sync's unsharded gradient
//    accumulation is not modelled); the sharded gradient's accumulation over micro-batches costs nothing;
//  - FSDP's rate limiter (at most two all-gathers in flight) is implicit: prefetch is one unit deep;
//  - the all-gather copy-in/copy-out kernels and the gradient casts around the reduce-scatter are not
//    modelled; biases and norm weights are left out (as ModelSpec::parameters());
//  - memory counts a 16-bit weight shard beside the fp32 master (as for ZeRO-3); FSDP2 keeps only the
//    fp32 shard, 2 B per sharded parameter less.

#include "sim/schedule/axonn4d.hpp"  // Infeasibility
#include "sim/schedule/memory.hpp"
#include "sim/schedule/model.hpp"
#include "sim/schedule/plan.hpp"
#include "sim/schedule/training.hpp"

namespace exasim::schedule {

enum FsdpDim : std::uint8_t { kFsdpDimShard = 0, kFsdpDimReplica = 1 };

struct FsdpConfig {
  std::uint32_t shard = 1;            ///< GPUs a parameter is sharded over (consecutive ranks)
  std::uint32_t replicas = 1;         ///< shard groups holding the same shards: GPUs / shard
  std::uint32_t micro_batch = 1;      ///< sequences per GPU per forward and backward
  bool prefetch = true;               ///< the next unit's all-gather is posted before the current compute
  bool reshard_after_forward = true;  ///< false: gathered from forward to backward, no backward gather
  [[nodiscard]] std::uint32_t gpus() const { return shard * replicas; }
};

/// Micro-batches per GPU per iteration: global_batch / (GPUs * micro_batch).
[[nodiscard]] std::int64_t fsdp_micro_batches(const FsdpConfig& cfg, const TrainingSpec& training);

/// Why this configuration cannot run on `gpus` GPUs: the scenario field to blame ("parallel.shard",
/// "parallel.micro_batch", "training.global_batch") and the reason. Empty `why` when it can.
[[nodiscard]] Infeasibility fsdp_infeasibility(const ModelSpec& model, const FsdpConfig& cfg,
                                               const TrainingSpec& training, std::uint32_t gpus);

/// Builds the plan (one stream for every rank). Throws std::invalid_argument when fsdp_infeasibility
/// (with gpus = cfg.gpus()) objects.
[[nodiscard]] Plan build_fsdp_plan(const ModelSpec& model, const FsdpConfig& cfg, const TrainingSpec& training);

/// Bytes per GPU (memory.hpp's terms; docs/fsdp.md derives them):
///   weights, gradients, optimizer: param_bytes() x parameters / shard;
///   activations: one micro-batch's, layers x kept + the working set (the training's recomputation);
///   buffers: the units gathered at once in the math type (the current and the prefetched one; every
///     unit with reshard_after_forward false; the tied root throughout) and one unit's unsharded
///     gradient in the reduction type; logits of one micro-batch; runtime for the shard and replica
///     groups.
[[nodiscard]] MemoryEstimate estimate_fsdp_memory(const ModelSpec& model, const FsdpConfig& cfg,
                                                  const TrainingSpec& training);

}  // namespace exasim::schedule
