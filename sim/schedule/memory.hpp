#pragma once
// Per-GPU memory of one training iteration: does a configuration fit the device's HBM?
//
// Bytes per GPU, broken down as:
//  - weights: bf16 (2 B per local parameter);
//  - gradients: bf16 (2 B);
//  - optimizer: mixed-precision Adam, fp32 master weights and two fp32 moments (12 B);
//    (2 + 2 + 12 = 16 B per parameter, the accounting of the ZeRO paper, Rajbhandari et al. SC20);
//  - activations: Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
//    Models"), bytes per layer per micro-batch of s*b tokens and hidden h:
//        no TP:            s*b*h*34
//        TP t:             s*b*h*(10 + 24/t)
//        TP t + sequence:  s*b*h*34/t
//    without their 5*a*s/h attention-matrix term: flash attention (which the plans cost) keeps no score
//    matrix. With full recomputation a layer keeps only its input (2*s*b*h, /t with sequence
//    parallelism), plus one layer's full set while it is recomputed and back-propagated. A pipeline
//    stage holds the activations of every micro-batch (model chunk) it has run forward but not yet
//    backward: min(m, p - s) for 1F1B, the interleaved schedule's warm-up + 1 chunk-micro-batches;
//    AxoNN 4D (one micro-batch, hidden split over x between layers, 3H/4H tensors over y) keeps
//    s*b*h*(10/gx + 24/gy) per layer, b = global_batch / (gdata * gz);
//  - workspace (an estimate, not a measured figure): transient buffers that scale with the
//    configuration (fp32 logits and their gradient on the stage with the LM head, gathered ZeRO-3 /
//    AxoNN z-sharded weights of the current and the prefetched layer, one gradient bucket - a layer, at
//    most DeepSpeed's default 5e8 elements - in the data-parallel reduction dtype), a fixed 1.5 GB for
//    the runtime context, BLAS workspaces and communication buffers, and 10% of everything else for
//    caching-allocator fragmentation.
// For Megatron the estimate is of the stage that needs the most (usually the first: most activations
// in flight and the embedding); ZeRO shards over dp: optimizer (1), + gradients (2), + weights (3).
//
// LIMITATIONS:
//  - biases, layer norms and position embeddings are ignored (as ModelSpec::parameters());
//  - Megatron-LM keeps fp32 "main" gradients (2 B more per parameter) and DeepSpeed's bf16 optimizer
//    fp32 gradient partitions; both are folded into the 16 B/parameter accounting, which may
//    under-estimate those frameworks by up to 2 B per parameter;
//  - the workspace and fragmentation terms are round estimates, not calibrated against any run;
//  - dropout masks are counted as in Korthikanti et al. (1 B per element) even if a run disables
//    dropout; no activation offloading or CPU optimizer.

#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/model.hpp"

namespace exasim::schedule {

/// Bytes per GPU.
struct MemoryEstimate {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, workspace = 0;
  [[nodiscard]] double total() const { return weights + gradients + optimizer + activations + workspace; }
};

[[nodiscard]] MemoryEstimate estimate_axonn4d_memory(const ModelSpec& model, const Axonn4DConfig& grid,
                                                     const TrainingSpec& training);

/// The pipeline stage with the largest total. Preconditions as build_megatron_plan (std::invalid_argument).
[[nodiscard]] MemoryEstimate estimate_megatron_memory(const ModelSpec& model, const MegatronConfig& cfg,
                                                      const TrainingSpec& training);

/// Same, for one stage.
[[nodiscard]] MemoryEstimate estimate_megatron_stage_memory(const ModelSpec& model, const MegatronConfig& cfg,
                                                            const TrainingSpec& training, std::uint32_t stage);

}  // namespace exasim::schedule
