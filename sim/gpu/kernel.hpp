#pragma once
// What a compute op asks of a GPU: the kind of kernel, its work and its data movement. Plans carry these
// descriptors; a GpuModel turns them into time. Keeping the descriptor (not a time) in the plan lets
// every GPU model, and calibration tables of measured times, cost the same op differently.

#include <cstdint>
#include <optional>
#include <string_view>

namespace exasim::gpu {

enum class KernelKind : std::uint8_t {
  Gemm,            ///< dense matrix multiply, m x k times k x n (batch of them), in the kernel's dtype
  FlashAttention,  ///< fused causal attention (forward or backward)
  MemoryBound,     ///< elementwise / normalisation / softmax / optimizer: time set by bytes moved
};

[[nodiscard]] std::string_view to_string(KernelKind kind);

/// Element type of a kernel's math. GEMMs run at the device's peak for this type; memory-bound kernels
/// carry their bytes already multiplied out, so for them it is informative only. Fp8 is a GEMM type only
/// (E4M3 or E5M2 operands, the same tensor-core peak): its result is bf16, as Transformer Engine's FP8
/// GEMMs write it.
enum class DType : std::uint8_t { Bf16, Fp16, Fp32, Fp8 };

[[nodiscard]] std::string_view to_string(DType dtype);
/// "bf16", "fp16", "fp32", "fp8" -> the type; nullopt for anything else.
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view name);
/// Bytes of one element: 1 for fp8, 2 for bf16 and fp16, 4 for fp32.
[[nodiscard]] constexpr double bytes_of(DType dtype) {
  return dtype == DType::Fp32 ? 4.0 : dtype == DType::Fp8 ? 1.0 : 2.0;
}
/// Bytes of one element of a GEMM's result: an fp8 GEMM writes bf16, the others their own type.
[[nodiscard]] constexpr double result_bytes_of(DType dtype) {
  return dtype == DType::Fp8 ? bytes_of(DType::Bf16) : bytes_of(dtype);
}

/// Family of a memory-bound kernel. Each family has its own sustained fraction of HBM bandwidth per
/// device (devices.hpp), because a fused LayerNorm (two passes over a row held in registers), a softmax
/// over a long row, a dropout that also writes its mask and a plain residual add do not stream equally
/// well.
enum class MemoryFamily : std::uint8_t {
  Elementwise,  ///< residual adds, gradient accumulation, embedding lookups, cross-entropy
  Norm,         ///< LayerNorm / RMSNorm, forward or backward
  Softmax,      ///< scale + mask + softmax of materialised attention scores (standard attention)
  Dropout,      ///< dropout (and bias-dropout-add), writing or reading its mask
  Activation,   ///< bias + GeLU, SwiGLU's silu(gate) * up
  Optimizer,    ///< the optimizer step over the parameter shard (multi-tensor Adam)
};
inline constexpr int kMemoryFamilies = 6;

[[nodiscard]] std::string_view to_string(MemoryFamily family);
/// Inverse of to_string(MemoryFamily); nullopt for an unknown name.
[[nodiscard]] std::optional<MemoryFamily> parse_memory_family(std::string_view name);

/// Operand layout of a row-major product C = A.B as the BLAS library receives it, named as AxoNN's
/// tuned_matmul variants and rocblas-bench (docs/axonn.md section 5): torch hands the product to column-major
/// rocBLAS/cuBLAS as C^T = B^T.A^T, so the first letter says whether B is stored transposed (a
/// column-major view), the second whether A is. NN: both as stored; TN: B column-major (the forward
/// X.W^T of a weight stored [out x in]); NT: A column-major (the weight gradient dY^T.X). Only the
/// relative cost matters: on MI250X, rocBLAS's TN kernels are reported much slower than NN.
enum class GemmLayout : std::uint8_t { NN, NT, TN };

[[nodiscard]] std::string_view to_string(GemmLayout layout);

struct Kernel {
  KernelKind kind = KernelKind::MemoryBound;
  double flops = 0;  ///< floating-point operations actually executed
  double bytes = 0;  ///< bytes read plus written in HBM
  // GEMM shape (batch x (m x k times k x n)); zero for other kinds. Used by shape-aware models.
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;                           ///< GEMM only: independent products in one launch (batched GEMM)
  GemmLayout layout = GemmLayout::NN;               ///< GEMM only: operand layout the framework runs it in
  DType dtype = DType::Bf16;                        ///< GEMM and attention: the math type (selects the device's peak)
  MemoryFamily family = MemoryFamily::Elementwise;  ///< MemoryBound only
};

/// A GEMM of m x k by k x n in `dtype`: 2mnk flops, operands (bytes_of) and result (result_bytes_of)
/// read/written once.
[[nodiscard]] Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout = GemmLayout::NN,
                          DType dtype = DType::Bf16);

/// `batch` independent GEMMs of m x k by k x n in one launch (torch.bmm / baddbmm, as standard attention
/// runs QK^T and scores x V per head): batch x 2mnk flops, batch x the operand and result bytes.
[[nodiscard]] Kernel batched_gemm(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k,
                                  GemmLayout layout = GemmLayout::NN, DType dtype = DType::Bf16);

/// A memory-bound kernel of one family moving `bytes` (read + written).
[[nodiscard]] Kernel memory_kernel(MemoryFamily family, double bytes);

}  // namespace exasim::gpu
