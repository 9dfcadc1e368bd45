#pragma once
// The kernels of one transformer layer as the frameworks run them (Megatron-LM's fused kernels,
// FlashAttention-2 or Megatron's standard attention), shared by every parallel scheme so that AxoNN 4D
// and Megatron cost the same work the same way. A scheme decides how tensors are split over its GPUs and
// passes the local sizes; the GEMMs of the linear layers come from gpu::gemm in the scheme itself.
//
// Bytes per kernel, per element of the tensor it streams (e = bytes of the math type: 2 for bf16/fp16,
// 4 for fp32; dropout masks are 1 byte, as torch stores them):
//   norm (LayerNorm / RMSNorm)        forward read x, write y: 2e        backward read x, dy, write dx: 3e
//   residual add                      forward 3e (x, branch, out)         backward 3e (the two gradients summed)
//   bias-dropout-add (dropout > 0)    forward 3e + 1 (the mask written)   backward adds dropout's 2e + 1
//   bias + GeLU (on the ffn tensor)   forward 2e                          backward 3e (dy, x, dx)
//   SwiGLU silu(gate) * up            forward 3e per ffn element (gate, up in; out)   backward 5e (dy, gate,
//                                                                                      up in; dgate, dup out)
//   attention, flash                  one kernel each way: causal flops 2 b s^2 h_l forward (QK^T and PV,
//                                     halved by the mask), 2.5x that backward (FlashAttention-2 recomputes
//                                     the scores: 5 matmuls instead of 2); bytes Q, K, V, O (K, V at the
//                                     key/value width), twice that backward
//   attention, standard               forward: scores = Q K^T (batched GEMM per head, full s x s: Megatron
//                                     computes the masked half too), fused scale+mask+softmax (read and
//                                     write the s x s scores: 2e), dropout on the probabilities (2e + 1),
//                                     context = P V (batched GEMM); backward: dV = P^T dO, dP = dO V^T,
//                                     dropout backward (2e + 1), softmax backward (P, dP in, dS out: 3e),
//                                     dQ = dS K, dK = dS^T Q
//   optimizer (Adam, per parameter)   mixed precision: read the gradient (g bytes), fp32 master, m, v;
//                                     write master, m, v and the half-precision weight: g + 26; fp32
//                                     training: read g, w, m, v, write w, m, v: g + 24
//
// FP8 (training.dtype fp8), as Transformer Engine's linear layers run under fp8_autocast with its default
// delayed-scaling recipe (E4M3 forward, E5M2 gradients) in Megatron-LM: the forward, dgrad and wgrad GEMMs
// of a transformer layer's linear layers (QKV, attention projection, MLP up and down) take fp8 operands
// at the device's FP8 peak and write bf16 (linear_gemm); the attention core's GEMMs (standard attention's
// batched GEMMs, flash attention), the LM head (Megatron's output layer is not a TE module) and every
// memory-bound kernel stay bf16. The casts are kernels of their own (elementwise family), each a
// cast-transpose that reads the bf16 tensor and writes it in fp8 twice, row- and column-major (Hopper's
// FP8 GEMMs take only K-major operands; the amax that scales the next step is taken in the same pass):
//   fp8_cast          4 B per element of a GEMM's activation operand: the layer's input in forward (the
//                     transpose feeds wgrad) and its output gradient in backward (dgrad and wgrad); the
//                     scheme casts each tensor where TE does: before a sequence-parallel all-gather, on the
//                     local shard;
//   fp8_weight_cast   4 B per linear-layer parameter, once per iteration: TE caches the fp8 weight and its
//                     transpose across micro-batches (Megatron passes is_first_microbatch).
//
// LIMITATIONS:
//  - one kernel per row above: the launches of unfused PyTorch (separate bias add, separate scale and
//    mask) are not modelled, nor are the fused QKV split/transpose copies, rotary embeddings, or GQA's
//    expansion of K and V to every query head in standard attention;
//  - standard attention's batched GEMMs are costed as NN strided batches on every device (no layout
//    penalty is known for them);
//  - the gradient accumulation of a weight over micro-batches is assumed fused into the dW GEMM
//    (Megatron-LM's gradient_accumulation_fusion, its default); when it is not, a scheme adds
//    grad_accumulation_add();
//  - biases and norm weights get no gradient kernels of their own (their work is a few bytes per channel);
//  - FP8: TE fuses some casts into the kernel before the GEMM (LayerNormLinear's norm, LayerNormMLP's
//    activation and its backward): here every cast is a kernel of its own; no per-tensor amax-history
//    kernels (a few bytes per tensor); Blackwell's MXFP8 block scaling is costed as per-tensor scaling
//    (its scales, 1 byte per 32 elements, are left out); the sequence-parallel all-gathers and
//    reduce-scatters stay bf16, whereas TE all-gathers an already cast fp8 input.

#include "sim/gpu/kernel.hpp"
#include "sim/schedule/model.hpp"
#include "sim/schedule/stream_builder.hpp"  // NamedKernel
#include "sim/schedule/training.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace exasim::schedule {

// Operand layouts of a linear layer whose weight W is stored [out x in], in GemmLayout's naming
// (kernel.hpp: the BLAS letters of torch's call, as AxoNN's tuned_matmul and rocblas-bench name them).
// Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication computes forward
// `input.matmul(weight.t())`, and in backward `grad_output.matmul(weight)` and
// `grad_output.t().matmul(input)`; Megatron-DeepSpeed's older layers and FSDP's modules call F.linear,
// whose autograd runs the same three products. So:
//   forward  Y  = X . W^T   (B = W^T is a column-major view; also the LM head's logits)  TN
//   dgrad    dX = dY . W    (both row-major)                                              NN
//   wgrad    dW = dY^T . X  (A = dY^T is a column-major view)                              NT
// The MI250X TN penalty (devices.cpp) comes from AxoNN's measurement in this naming (docs/axonn.md
// section 5: "tn" = B column-major), so it lands on the forward GEMMs, as untuned torch runs them.
inline constexpr gpu::GemmLayout kForwardLayout = gpu::GemmLayout::TN;
inline constexpr gpu::GemmLayout kDgradLayout = gpu::GemmLayout::NN;
inline constexpr gpu::GemmLayout kWgradLayout = gpu::GemmLayout::NT;

/// The widths of a layer's tensors before any split: the plans' Shape structs carry one.
struct LayerWidths {
  std::int64_t qkv_out = 0;     ///< fused QKV projection output (ModelSpec::qkv_out)
  std::int64_t mlp_up_out = 0;  ///< first MLP projection output (ffn, or 2 ffn for SwiGLU)
  std::int64_t ffn = 0;         ///< MLP inner width
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;

  [[nodiscard]] static LayerWidths of(const ModelSpec& m) {
    return {m.qkv_out(), m.mlp_up_out(), m.ffn(), m.heads, m.kv(), m.head_dim()};
  }
  [[nodiscard]] const char* activation_name() const { return mlp_up_out == ffn ? "gelu" : "swiglu"; }
};

/// The attention core on one GPU: `batch` sequences of `seq` tokens, `heads` query heads and
/// `kv_heads` key/value heads of `head_dim` each (the scheme's local share).
struct AttentionSlice {
  std::int64_t batch = 1;
  std::int64_t seq = 1;
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t head_dim = 1;
};

class LayerKernels {
 public:
  LayerKernels(const ModelSpec& model, const TrainingSpec& training);

  [[nodiscard]] double element_bytes() const { return e_; }
  /// Type of every kernel here but the FP8 GEMMs: the training type, bf16 under fp8.
  [[nodiscard]] gpu::DType dtype() const { return training_.math_dtype(); }
  [[nodiscard]] bool dropout() const { return training_.has_dropout(); }

  // Elementwise work over `elements` values of a [tokens x width] tensor.
  [[nodiscard]] gpu::Kernel norm_forward(double elements) const;
  [[nodiscard]] gpu::Kernel norm_backward(double elements) const;
  /// Residual add after attention or the MLP: bias-dropout-add with dropout, a plain add without.
  [[nodiscard]] gpu::Kernel residual_forward(double elements) const;
  /// Backward of a residual branch's output: dropout's mask times the gradient (".dropout", with
  /// dropout), then the two gradients summed ("").
  [[nodiscard]] std::vector<NamedKernel> residual_backward(double elements) const;
  /// Dropout's backward (mask times gradient); only meaningful with dropout.
  [[nodiscard]] gpu::Kernel dropout_backward(double elements) const;
  /// Dropout alone (on the embedding output).
  [[nodiscard]] gpu::Kernel dropout_forward(double elements) const;
  /// Bias + GeLU or SwiGLU over `ffn_elements` = tokens x local ffn width.
  [[nodiscard]] gpu::Kernel activation_forward(double ffn_elements) const;
  [[nodiscard]] gpu::Kernel activation_backward(double ffn_elements) const;
  /// A plain streaming kernel of `bytes` (embedding lookup, cross-entropy, tied-gradient add).
  [[nodiscard]] static gpu::Kernel elementwise(double bytes);

  /// Type of a transformer layer's linear GEMMs (dense or grouped experts): fp8 under training.dtype fp8.
  [[nodiscard]] gpu::DType linear_dtype() const { return training_.dtype; }
  /// A transformer layer's linear GEMM (m x k by k x n): fp8 under training.dtype fp8, else dtype().
  [[nodiscard]] gpu::Kernel linear_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) const;
  /// Under fp8, the cast of `elements` values of a linear GEMM's activation operand: one ".fp8_cast"
  /// kernel; nothing otherwise.
  [[nodiscard]] std::vector<NamedKernel> fp8_cast(double elements) const;
  /// Under fp8, the once-per-iteration cast of `params` linear-layer weights: one ".fp8_cast" kernel;
  /// nothing otherwise.
  [[nodiscard]] std::vector<NamedKernel> fp8_weight_cast(double params) const { return fp8_cast(params); }

  /// Attention core forward / backward, one or several kernels.
  [[nodiscard]] std::vector<NamedKernel> attention_forward(const AttentionSlice& a) const;
  [[nodiscard]] std::vector<NamedKernel> attention_backward(const AttentionSlice& a) const;

  /// One Adam step over `params` local parameters whose gradients are `grad_bytes` per element.
  [[nodiscard]] gpu::Kernel optimizer_step(double params, double grad_bytes) const;
  /// main_grad += dW for `params` parameters when accumulation is not fused into the dW GEMM.
  [[nodiscard]] gpu::Kernel grad_accumulation_add(double params, double grad_bytes) const;

 private:
  TrainingSpec training_;
  Activation activation_;
  double e_;
};

}  // namespace exasim::schedule
