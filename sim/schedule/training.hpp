#pragma once
// How a model is trained, independent of the parallel scheme: batch, recomputation, attention kernel,
// dropout and number formats. Scenario keys under "training" (README's scenario table).

#include "sim/gpu/kernel.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace exasim::schedule {

/// Activation recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
/// Transformer Models"):
///  - None: every activation is kept from forward to backward;
///  - Selective: only the attention core (QK^T, softmax, dropout, scores x V) is dropped after forward and
///    recomputed just before its backward; the rest of the layer's activations are kept;
///  - Full: each layer keeps only its input and recomputes its whole forward before its backward.
enum class Recompute : std::uint8_t { None, Selective, Full };

/// How the attention core runs:
///  - Flash: one fused kernel (FlashAttention-2): no s x s scores in memory, backward recomputes them;
///  - Standard: as Megatron-LM without flash: batched QK^T, fused scale+mask+softmax, dropout on the
///    probabilities, batched probabilities x V; the scores, probabilities and dropout mask are kept for
///    backward (5 a s^2 b bytes per layer in Korthikanti et al.'s count).
enum class AttentionImpl : std::uint8_t { Flash, Standard };

struct TrainingSpec {
  std::int64_t global_batch = 1;          ///< sequences per iteration
  Recompute recompute = Recompute::Full;  ///< activation recomputation
  AttentionImpl attention = AttentionImpl::Flash;
  /// Dropout probability (attention probabilities, after attention and after the MLP, as Megatron-LM's
  /// attention_dropout / hidden_dropout). 0 removes the dropout kernels and their masks.
  double dropout = 0.1;
  /// Training type: bf16 or fp16 (mixed precision), fp32, or fp8: bf16 mixed precision whose
  /// transformer-layer linear GEMMs run in FP8, as Transformer Engine runs them (internal/layer_kernels.hpp).
  gpu::DType dtype = gpu::DType::Bf16;
  double dp_grad_bytes = 4;  ///< bytes per gradient element in the data reduction (fp32: 4)

  [[nodiscard]] bool full_recompute() const { return recompute == Recompute::Full; }
  [[nodiscard]] bool selective_recompute() const { return recompute == Recompute::Selective; }
  [[nodiscard]] bool has_dropout() const { return dropout > 0; }
  [[nodiscard]] bool fp8() const { return dtype == gpu::DType::Fp8; }
  /// Type of activations, weights and every kernel but the FP8 GEMMs: bf16 under fp8.
  [[nodiscard]] gpu::DType math_dtype() const { return fp8() ? gpu::DType::Bf16 : dtype; }
  /// Bytes of one activation / weight element in the math type.
  [[nodiscard]] double element_bytes() const { return gpu::bytes_of(math_dtype()); }
  /// Mixed precision keeps fp32 master weights beside the bf16/fp16 ones; fp32 training does not.
  [[nodiscard]] bool mixed_precision() const { return dtype != gpu::DType::Fp32; }
};

/// Bytes per element of a dropout mask: torch keeps them as bool tensors whatever the math type.
inline constexpr double kDropoutMaskBytes = 1;

[[nodiscard]] const char* to_string(Recompute recompute);
[[nodiscard]] const char* to_string(AttentionImpl attention);
/// Inverses of to_string: "none", "selective", "full" / "flash", "standard"; nullopt for anything else.
[[nodiscard]] std::optional<Recompute> parse_recompute(std::string_view name);
[[nodiscard]] std::optional<AttentionImpl> parse_attention(std::string_view name);

}  // namespace exasim::schedule
