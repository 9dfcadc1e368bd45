#pragma once
// The Megatron-LM / Megatron-DeepSpeed plan: tensor (TP), pipeline (PP) and data (DP) parallelism with
// DeepSpeed's ZeRO stages over DP (Shoeybi et al. 2019; Narayanan et al., SC21; Korthikanti et al. 2022;
// Rajbhandari et al., SC20), as the Frontier study (docs/frontier.md) ran it.
//
// Rank layout, as Megatron-Core's parallel_state ("tp-cp-dp-pp"): TP fastest, then CP, then DP, then PP:
//   rank = ((pp_stage * dp + dp_rank) * cp + cp_rank) * tp + tp_rank,
// so grid dimensions are (tp, dp, pp) in that order, TP groups are consecutive ranks (inside a node when
// tp <= GPUs per node) and a pipeline stage is a contiguous block of tp*cp*dp ranks. Role = pipeline stage
// (plan.role_dim = kMegDimPp): every stage has its own op stream. With context parallelism (cp > 1) the
// second dimension is "dp_cp", dp x cp ranks (cp fastest): every CP rank holds the whole weights of its
// TP shard, so gradients are reduced (and ZeRO shards) over dp x cp, as Megatron-Core's data-parallel group
// with context parallelism; the CP group is a fourth dimension, "cp" (kMegDimCp), nested in it
// (ProcessGrid::add_nested). Context parallelism: context_parallel.hpp.
//
// One iteration on a stage:
//  - m = global_batch / (dp * micro_batch) micro-batches (gradient accumulation; CP splits each
//    micro-batch's sequences, not the batch: seq/cp tokens of every sequence per rank), run by the 1F1B or
//    the interleaved schedule (internal/pipeline_schedule.hpp) with Send/Recv of micro_batch x seq x hidden
//    activations and gradients between stages in the math type (divided by tp with sequence
//    parallelism, whose p2p tensors are sequence-sharded, and with Megatron's scatter-gather,
//    parallel.scatter_gather, default on: each TP rank sends 1/tp of the tensor and the receiving stage
//    all-gathers it over TP before using it, Narayanan et al. SC21 section 4.1);
//  - the L layers are split evenly over pp * virtual_stages model chunks; stage s holds chunks
//    s, s + pp, ...; the (vocab-parallel) embedding is on the first model chunk, final norm, LM head and
//    loss on the last;
//  - each layer: column-parallel QKV (query heads/tp, key/value heads/tp), the attention core on those
//    heads (flash or standard, internal/layer_kernels.hpp; with cp > 1 its steps and K/V exchange over CP,
//    context_parallel.hpp), row-parallel attention output, column-parallel MLP up
//    (GeLU, or SwiGLU's gate and up), row-parallel MLP down, and the norms, bias-dropout-adds and
//    activation kernels between them. Forward: one TP all-reduce after each row-parallel
//    layer; backward: one after each column-parallel layer's dX GEMM, overlapped with its dW GEMM
//    (Megatron's async grad all-reduce). With sequence parallelism: all-gather before each column-parallel
//    layer and reduce-scatter after each row-parallel one; backward reverses them and all-gathers the
//    column-parallel input a second time for the dW GEMM (overlapped with the dX GEMM), as Megatron's
//    LinearWithGradAccumulationAndAsyncCommunication does;
//  - GEMM operand layouts as torch runs them for a weight stored [out x in], in GemmLayout's naming
//    (kernel.hpp: the BLAS letters of the column-major call, first letter = B stored transposed, second
//    = A): forward X.W^T TN, dgrad dX = dY.W NN, wgrad dW = dY^T.X NT (megatron.cpp has the derivation);
//  - full recomputation (training.recompute) repeats each layer's forward (with its TP collectives)
//    just before its backward; selective recomputation repeats only the attention core, just before
//    the attention backward;
//  - with pp > 1 the word embedding is tied between the first and the last stage: their gradients are
//    exchanged (Send/Recv both ways, as a 2-member all-reduce) after the pipeline flush, before the DP
//    reduction (DeepSpeed's ReduceTiedGrads, then ReduceGrads);
//  - data parallel, ZeRO stage:
//      0: all-reduce of the stage's gradients (training.dp_grad_bytes per element);
//      1: reduce-scatter of the gradients, Adam on 1/dp of the parameters, all-gather of the bf16
//         parameters (DeepSpeed stage 1);
//      2: as 1, but gradients are reduce-scattered after every micro-batch's backward, per layer (DeepSpeed
//         stage 2 reduces at every micro-step);
//      3: as 2, plus a bf16 all-gather of each layer's parameters before its forward and before its
//         backward (recomputation included), one layer ahead (DeepSpeed's prefetch); no all-gather after
//         the optimizer step.
//    With overlap.dp, ZeRO 0/1 reductions start bucket by bucket (one bucket per layer, Megatron's
//    overlap_grad_reduce) during the backward of each chunk's last micro-batch, and ZeRO 2/3
//    reduce-scatters stay in flight until the end of that chunk's backward; otherwise they run after the
//    pipeline flush (ZeRO 0/1, as DeepSpeed's pipeline engine does) or blocking per layer (ZeRO 2/3).
//  - a mixture of experts (moe.hpp): a MoE layer's MLP is its shared experts (a tensor-parallel MLP as the
//    dense one) and its routed experts, dispatched and combined by all-to-alls over expert-parallel groups
//    (parallel.ep, expert tensor parallelism parallel.etp; internal/moe_block.hpp has the kernels, the
//    collectives and the rank layout); a MoE layer's routed-expert gradients are reduced (and, ZeRO 1,
//    sharded) over the expert data-parallel group "edp" instead of dp, its other weights over dp as a
//    dense layer's, in separate buckets.
//
// LIMITATIONS:
//  - biases, layer-norm parameters and position embeddings are left out (as ModelSpec::parameters());
//    so is the sequence-parallel all-reduce of layer-norm gradients;
//  - the vocabulary is split over TP rounded up (Megatron pads it to a multiple of 128 * tp);
//  - DeepSpeed's pipeline engine refuses ZeRO 2/3 with pp > 1; this plan builds them anyway (what-if);
//  - no p2p/compute overlap (Megatron's --overlap-p2p-comm), no distributed optimizer of Megatron-core (ZeRO-1 stands
//  for it);
//  - a mixture of experts (model.experts) runs with ZeRO 0 or 1 only;
//  - the cross-entropy's three small TP all-reduces (max, predicted logit, sum) are modelled; the loss
//    all-reduce over DP and grad-norm reductions are not;
//  - gradient accumulation is fused into the dW GEMM by default (parallel.grad_accumulation_fusion);
//    whether the ROCm build of Megatron-DeepSpeed used by the Frontier study did is unknown; the fused
//    dW GEMM's fp32 read-modify-write of its output is not added to its bytes.

#include "sim/schedule/axonn4d.hpp"  // TrainingSpec, OverlapSpec, Infeasibility
#include "sim/schedule/context_parallel.hpp"
#include "sim/schedule/model.hpp"
#include "sim/schedule/plan.hpp"

namespace exasim::schedule {

/// kMegDimDp is "dp" (dp ranks) or, with cp > 1, "dp_cp" (dp x cp ranks); kMegDimCp exists only with cp > 1.
enum MegatronDim : std::uint8_t { kMegDimTp = 0, kMegDimDp = 1, kMegDimPp = 2, kMegDimCp = 3 };

struct MegatronConfig {
  std::uint32_t tp = 1, pp = 1, dp = 1, zero = 0 /*0..3*/, micro_batch = 1, virtual_stages = 1;
  bool sequence_parallel = false;
  /// Pipeline tensors are split over the TP group before the send and all-gathered after the receive
  /// (Megatron-LM's scatter-gather optimisation, on by default there; Narayanan et al. SC21 4.1). Only
  /// matters with tp > 1 and without sequence parallelism (whose tensors are already split).
  bool scatter_gather = true;
  /// Gradients of a weight are accumulated over micro-batches inside its dW GEMM (Megatron-LM's
  /// gradient_accumulation_fusion, its default). false: autograd's main_grad += dW, one streaming kernel
  /// per layer per micro-batch (as in frameworks without the fused wgrad kernel).
  bool grad_accumulation_fusion = true;
  /// Transformer Engine's tensor-parallel communication overlap (Megatron-LM/NeMo `tp_comm_overlap`,
  /// userbuffers): with sequence parallelism, the all-gather before a column-parallel GEMM and the
  /// reduce-scatter after a row-parallel one run in tp pieces, each piece's GEMM chunk beside the next
  /// piece's transfer, in forward and in the backward dgrad GEMMs (the wgrad GEMMs already hide them).
  /// Needs sequence_parallel and tp > 1.
  bool tp_comm_overlap = false;
  /// Context parallelism: each sequence split over cp ranks with causal load balancing, K/V exchanged
  /// over the CP group by `cp_comm` (context_parallel.hpp). Needs flash attention.
  std::uint32_t cp = 1;
  CpComm cp_comm = CpComm::P2p;
  /// Ranks holding the same weights: the gradient reduction's and ZeRO's group.
  [[nodiscard]] std::uint32_t dp_cp() const { return dp * cp; }
  /// Expert parallelism: a MoE model's experts split over ep ranks carved out of the dp x cp ones
  /// (internal/moe_block.hpp); 1 for a dense model.
  std::uint32_t ep = 1;
  /// Expert tensor parallelism; 0 means tp (Megatron-Core's default for expert_tensor_parallel_size).
  std::uint32_t etp = 0;
  [[nodiscard]] std::uint32_t expert_tp() const { return etp != 0 ? etp : tp; }
  [[nodiscard]] std::uint32_t gpus() const { return tp * cp * pp * dp; }
};

/// Micro-batches per pipeline per iteration: global_batch / (dp * micro_batch).
[[nodiscard]] std::int64_t megatron_micro_batches(const MegatronConfig& cfg, const TrainingSpec& training);

/// Why this configuration cannot run this model on `gpus` GPUs: the scenario field to blame ("gpus",
/// "parallel.tp", "parallel.cp", "parallel.pp", "parallel.virtual_stages", "parallel.zero",
/// "parallel.micro_batch", "parallel.ep", "parallel.etp", "training.global_batch", ...) and the reason. Empty
/// `why` when it can.
[[nodiscard]] Infeasibility megatron_infeasibility(const ModelSpec& model, const MegatronConfig& cfg,
                                                   const TrainingSpec& training, std::uint32_t gpus);

/// Builds the plan; only `overlap.dp` is used (the others are AxoNN's). Throws std::invalid_argument when
/// megatron_infeasibility (with gpus = cfg.gpus()) objects.
[[nodiscard]] Plan build_megatron_plan(const ModelSpec& model, const MegatronConfig& cfg, const TrainingSpec& training,
                                       const OverlapSpec& overlap = {true, true, true, false});

}  // namespace exasim::schedule
