#pragma once
// Per-GPU memory of one training iteration: does a configuration fit the device's HBM?
// docs/memory.md has the same model with the scenario keys that change each term.
//
// Bytes per GPU, broken down as:
//
// WEIGHTS, GRADIENTS, OPTIMIZER, per local parameter (ModelSpec::layer_params / embedding_params, so
// SwiGLU's third matrix, GQA's narrower K and V and an untied LM head count), as the frameworks keep them:
//   mixed precision (training.dtype bf16 or fp16):
//     weights 2 B (the math copy);
//     gradients training.dp_grad_bytes: the buffer the gradients are accumulated in and reduced from
//       (Megatron-LM's contiguous "main_grad" buffer: fp32, 4 B, with --accumulate-allreduce-grads-in-fp32 /
//       NeMo's grad_reduce_in_fp32, the default here; 16-bit, 2 B, with training.dp_grad_dtype bf16);
//     optimizer 12 B: fp32 master weights + Adam m + v (the ZeRO paper's K = 12, Rajbhandari et al. SC20),
//       16 B with a 16-bit gradient buffer: the optimizer steps on an fp32 copy of the gradient (Megatron-LM's
//       distributed optimizer guide, docs/source/api-guide/dist_optimizer.md: bf16 param + fp32 grads
//       6 + 12/d, 16-bit param + 16-bit grads 4 + 16/d bytes per parameter with d-way sharding);
//   fp32 (training.dtype fp32): weights 4, gradients 4 (param.grad is fp32 whatever dtype the reduction
//     uses), optimizer 8 (Adam m + v: the weights are already the master copy; the guide's 8 + 8/d);
//   fp8 (training.dtype fp8, Megatron only): as bf16, plus 2 B per transformer-layer linear parameter in
//     the weights (routed experts' included): Transformer Engine's fp8 copy of the weight and of its
//     transpose, cached across micro-batches (internal/layer_kernels.hpp); the embedding and LM head have none.
// ZeRO shards over dp (Megatron with context parallelism: dp x cp, the ranks holding the same weights):
// optimizer (stage 1), + gradients (2), + weights (3); a mixture of experts' routed experts sit experts/ep
// per GPU, split over etp, and ZeRO 1 shards their optimizer state over edp (Megatron-Core's distributed
// optimizer over the expert data-parallel group). AxoNN 4D: layer weights
// over gx*gy*gz, the embedding over gx*gy (not z-sharded). Megatron: the first pipeline stage holds the
// input embedding, the last the LM head (untied: its own matrix; tied: a copy when pp > 1, the same
// matrix when pp = 1); the vocabulary is split over tp, rounded up.
//
// ACTIVATIONS, derived term by term from Korthikanti et al. 2022 ("Reducing Activation Recomputation
// in Large Transformer Models", section 4.1 and Table 2). For one micro-batch of b sequences of s tokens,
// hidden h, a heads, their per-layer count in bytes (16-bit tensors, 1-byte dropout masks) is
//   attention block 11sbh + 5as^2b:
//     QKV GEMM input 2sbh; QK^T inputs Q and K 4sbh; softmax output 2as^2b; its dropout mask as^2b;
//     scores x V inputs: dropout output 2as^2b and V 2sbh; output projection input 2sbh; dropout mask sbh;
//   MLP 19sbh: up GEMM input 2sbh; GeLU input 8sbh; GeLU output (down GEMM input) 8sbh; dropout mask sbh;
//   two layer norms 4sbh (their inputs);
// total sbh(34 + 5as/h). Tensor parallelism t splits everything between the column- and the row-parallel
// GEMMs (Q, K, V, the s^2 terms, the projection input, the MLP's inner 16sbh: 24sbh + 5as^2b) and
// replicates the rest (norm inputs, QKV and MLP inputs, the two masks: 10sbh): sbh(10 + 24/t + 5as/(ht));
// sequence parallelism splits the rest over t too: sbh(34/t + 5as/(ht)) (the column-parallel GEMMs keep
// their sequence-sharded input and all-gather it again in backward, Korthikanti's section 4.2.3, as
// Megatron-core's and Transformer Engine's linear layers do).
// Generalised, with element size e (training.dtype: 2 for bf16/fp16/fp8, 4 for fp32; masks stay 1 B),
// ffn = ModelSpec::ffn(), kvh = ModelSpec::kv_hidden() (= h without GQA), and two divisors: `inner` for
// the tensors between column- and row-parallel GEMMs (Megatron t; AxoNN gy) and `outer` for the others
// (Megatron 1, t with sequence parallelism; AxoNN gx, which splits the hidden between layers):
//   outer: norm inputs 2e sbh, QKV input l sbh, MLP input l sbh, dropout masks 2sbh (dropout > 0 only);
//   inner: Q e sbh, K and V 2e sb kvh, projection input l sbh,
//          MLP: GeLU (e + l) sb ffn (its input and output); SwiGLU (2e + l) sb ffn (gate and up outputs,
//          kept fused as Megatron's swiglu saves them, and their product, the down GEMM's input);
//   where l, the bytes a linear layer keeps of its input for the weight gradient, is e, or 1 under fp8:
//   Transformer Engine's linear layers save the fp8 cast of their input, not the bf16 tensor (the norm
//   inputs, Q, K, V and the activation's inputs stay bf16);
//   attention core (inner), the terms the attention kernel itself keeps for its backward:
//     standard: softmax output e as^2b, and with dropout its mask as^2b and the dropout output e as^2b
//       (without dropout the scores x V GEMM keeps the softmax output itself: e as^2b in all); with GQA
//       the batched GEMMs keep K and V expanded to every head (Megatron-LM's DotProductAttention repeats
//       them), 2e sb(h - kvh) more;
//     flash: the per-row softmax statistics (log-sum-exp), 4 B x a s b; its output is the projection
//       input already counted, and its dropout mask is regenerated from the RNG state, never stored.
// With e = 2, ffn = 4h, kvh = h, dropout on and standard attention these add up to Korthikanti's closed
// forms exactly (memory_test.cpp checks them).
// Recomputation (training.recompute) decides what a layer keeps per micro-batch in flight, and what
// exists once per GPU while a layer is recomputed and back-propagated (the working set):
//   none:      everything; no working set;
//   selective: everything but the attention core (Korthikanti's 34sbh, /t with SP); working set: one
//              layer's core (the recomputed s^2 terms or the flash statistics);
//   full:      the layer's input e sbh (/outer); working set: one layer's everything.
// Which micro-batches are in flight: a Megatron stage holds every (chunk-)micro-batch it has run forward
// but not yet backward: min(m, p - s) for 1F1B, the interleaved schedule's warm-up + 1 chunk-micro-batches
// (internal/pipeline_schedule.hpp; Megatron-core's schedules.py: 2(p - s - 1) + (v - 1)p warm-up, all of the
// v*m when that is more, so the first stage holds L(1 + (p - 1)/(pv)) layers' worth, Narayanan et al.
// SC21); AxoNN 4D runs one micro-batch of b = global_batch / (gdata * gz) sequences. Context parallelism
// (Megatron, cp > 1) leaves a rank s/cp tokens of each sequence: every term above with s/cp for s (flash
// attention only, so no s^2 term).
//
// WORKSPACE, three parts:
//   logits, on the stage with the LM head: the cross-entropy's peak, one micro-batch's logits in fp32 and
//     in the math type at once (4 + e B per token per local vocabulary entry; 4 B in fp32 training):
//     Megatron-core's vocab-parallel cross-entropy upcasts them while the caller holds the 16-bit ones,
//     works in place on the fp32 copy, saves it, writes the gradient into it and casts that back;
//   buffers: with context parallelism, the attention's K/V exchange (context_parallel.hpp): the whole
//     sequence's K/V of the rank's TP shard, 2 e s b kvh/t (p2p: Transformer Engine keeps every block a
//     layer's forward receives until it ends; all_gather: the gathered K/V), twice that with all_gather
//     (dK/dV of the whole sequence before the backward's reduce-scatter);
//     with ZeRO 2/3, DeepSpeed's gradient bucket (a layer, at most its default reduce_bucket_size of
//     5e8 elements, in the reduction dtype); ZeRO 3 / AxoNN's z-sharding, the current and the prefetched
//     layer gathered (AxoNN: its largest linear layer). ZeRO 0/1 reduce in place in the gradient buffer
//     (Megatron-LM's DDP and distributed optimizer), and the distributed optimizer all-gathers the updated
//     parameters in place in the parameter buffer: nothing more;
//   runtime, outside PyTorch's allocator: the CUDA context (an estimate, 0.5 GB) and NCCL's buffers for
//     each process group that communicates (TP, DP, CP with all_gather, the tied embedding's; AxoNN's x,
//     y, z, data): per channel one Simple (NCCL_BUFFSIZE, 4 MiB), one LL128 and one LL buffer, 9.6 MB, for
//     each of the at most 32 channels of a ring: 0.31 GB per group.
// The total compares with PyTorch's peak allocated memory (torch.cuda.max_memory_allocated) plus the
// runtime part; what the caching allocator reserves but does not hand out is not counted (LIMITATIONS).
// For Megatron the estimate is of the stage that needs the most (the first: most activations in flight
// and the embedding; or the last: LM head and logits).
//
// LIMITATIONS:
//  - biases, norm weights and position embeddings are ignored (as ModelSpec::parameters());
//  - Korthikanti's section 4.3 extras are not counted as activations: the embedding's dropout mask on the
//    first stage, the final norm and the LM head input on the last (the logits are in the workspace);
//  - DeepSpeed's BF16_Optimizer is not modelled as such: the ZeRO stage says what is sharded and the
//    gradients are one buffer of dp_grad_bytes. As we read DeepSpeed's source (not checked against the
//    Frontier study's version), bf16 with ZeRO 0 runs that optimizer, which shards the fp32 master and
//    Adam state over dp like ZeRO-1: such a run is parallel.zero = 1 here;
//  - a recomputed layer's transient tensors (GEMM outputs not kept, cuBLAS workspaces) beyond the kept
//    set are not counted; nor are the optimizer step's temporaries;
//  - caching-allocator fragmentation (reserved minus allocated memory) is not counted: it depends on the
//    order of allocations and on PYTORCH_CUDA_ALLOC_CONF (expandable_segments reduces it), not on a
//    closed form; a run within a few GB of the capacity may still need it, or allocator settings;
//  - the CUDA context is a round estimate; NCCL's buffers assume 32 ring channels per process group and
//    leave out p2p (pipeline) and tree buffers, NVLink SHARP's and user-buffer (TP overlap) registrations;
//  - fp8: the transient fp8 casts of the GEMM being run (a layer's input and output gradient) are not
//    counted, nor TE's scaling state (a few bytes per tensor); with ZeRO 3 the fp8 weight copies are
//    sharded over dp like the weights they are cast from (an assumption: TE's cache is per module);
//  - the logits of only one micro-batch are counted, at the cross-entropy's peak;
//  - with context parallelism, the per-step partial outputs Transformer Engine's p2p forward keeps until
//    it merges them (cp x the attention output) are not counted;
//  - no activation offloading, CPU optimizer, activation checkpointing of a subset of layers, or
//    fp32 residual stream (--fp32-residual-connection);
//  - a mixture of experts (moe_layer_activations): the routed tensors are those of the busiest
//    expert-parallel rank (the hottest experts' under expert_skew); a stage's layers keep their mean per
//    micro-batch in flight (exact with one virtual stage, where every chunk holds the same layers); the
//    all-to-all buffers and the router's load-balancing loss are not counted.

#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/model.hpp"
#include "sim/schedule/training.hpp"

#include <string>
#include <vector>

namespace exasim::schedule {

/// Bytes per GPU. `activations` holds what the layers keep for backward plus the recomputation working
/// set (one layer's, see above); `workspace` = logits + buffers + runtime.
struct MemoryEstimate {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, workspace = 0;
  double logits = 0;   ///< the cross-entropy's peak on the stage with the LM head
  double buffers = 0;  ///< ZeRO 2/3 gradient bucket, ZeRO-3 / AxoNN z gathered layers
  double runtime = 0;  ///< CUDA context and NCCL buffers, outside PyTorch's allocator
  [[nodiscard]] double total() const { return weights + gradients + optimizer + activations + workspace; }
};

/// Which term decides. `largest`: the largest of the five parts (the first on a tie, in the breakdown's
/// order). Above `capacity_bytes`: `over_bytes` by how much, and `over_terms` the parts each larger than
/// that, in the breakdown's order: the ones that alone could bring the rest under the capacity (none when
/// the overflow exceeds every part).
struct MemoryVerdict {
  std::string largest;
  double largest_bytes = 0;
  double over_bytes = 0;  ///< total - capacity when positive, else 0
  std::vector<std::string> over_terms;
};
[[nodiscard]] MemoryVerdict memory_verdict(const MemoryEstimate& estimate, double capacity_bytes);

/// Bytes per parameter of weights, gradients and optimizer state before any ZeRO sharding (header:
/// mixed precision 2, dp_grad_bytes, 12 with fp32 gradients or 16 with 16-bit ones; fp32 4, 4, 8).
struct ParamBytes {
  double weights = 0, gradients = 0, optimizer = 0;
};
[[nodiscard]] ParamBytes param_bytes(const TrainingSpec& training);

/// Bytes outside PyTorch's allocator: the CUDA context and NCCL's ring buffers of every process group
/// that communicates (`groups`: grid dimensions of more than one GPU).
[[nodiscard]] double runtime_bytes(int groups);
/// Logits of one micro-batch at the cross-entropy's peak, per token and local vocabulary entry.
[[nodiscard]] double logit_bytes(const TrainingSpec& training);

/// How one layer's activations are divided over the GPUs of a tensor-parallel group.
struct ActivationSplit {
  double outer = 1;  ///< divisor of tensors outside the column/row-parallel pair: 1, tp with SP, AxoNN gx
  double inner = 1;  ///< divisor of tensors between them (Q, K, V, scores, MLP inner): tp, AxoNN gy
};

/// One layer's activations for one micro-batch, in bytes, as the header derives them.
struct LayerActivations {
  double input = 0;         ///< the layer's input, e*s*b*h / outer: what full recomputation keeps
  double outside_core = 0;  ///< everything kept except the attention core's own terms (selective keeps this)
  double core = 0;          ///< the attention core's own terms (standard: s^2 terms; flash: softmax statistics)
  [[nodiscard]] double all() const { return outside_core + core; }
  /// Kept per layer per micro-batch in flight under `mode`.
  [[nodiscard]] double kept(Recompute mode) const;
  /// Held once per GPU while a layer is recomputed and back-propagated under `mode`.
  [[nodiscard]] double working_set(Recompute mode) const;
};

/// `sequences` = micro-batch size b (s = model.seq_len).
[[nodiscard]] LayerActivations layer_activations(const ModelSpec& model, const TrainingSpec& training, double sequences,
                                                 ActivationSplit split);

/// A MoE layer's (moe.hpp): as layer_activations with the dense MLP's inner tensors replaced by the shared
/// experts' (a TP-split MLP of shared_experts x expert_ffn_hidden), plus what the routed part keeps, per
/// GPU: the router's fp32 probabilities (4 B x routed_tokens x experts), the experts' permuted input
/// (e x received_copies x h) and inner tensors (as the MLP's, received_copies x expert_ffn_hidden: an
/// etp split of the width is undone by the etp gather of the rows), and the combined copies the
/// unpermute keeps for its probabilities' gradient (e x routed_tokens x top_k x kept x h).
/// `routed_tokens`: the tokens this GPU routes; `received_copies`: the copies its experts compute.
[[nodiscard]] LayerActivations moe_layer_activations(const ModelSpec& model, const TrainingSpec& training,
                                                     double sequences, ActivationSplit split, double routed_tokens,
                                                     double received_copies);

[[nodiscard]] MemoryEstimate estimate_axonn4d_memory(const ModelSpec& model, const Axonn4DConfig& grid,
                                                     const TrainingSpec& training);

/// The pipeline stage with the largest total. Preconditions as build_megatron_plan (std::invalid_argument).
[[nodiscard]] MemoryEstimate estimate_megatron_memory(const ModelSpec& model, const MegatronConfig& cfg,
                                                      const TrainingSpec& training);

/// Same, for one stage.
[[nodiscard]] MemoryEstimate estimate_megatron_stage_memory(const ModelSpec& model, const MegatronConfig& cfg,
                                                            const TrainingSpec& training, std::uint32_t stage);

}  // namespace exasim::schedule
