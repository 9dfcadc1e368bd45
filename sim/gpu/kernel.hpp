#pragma once
// What a compute op asks of a GPU: the kind of kernel, its work and its data movement. Plans carry these
// descriptors; a GpuModel turns them into time. Keeping the descriptor (not a time) in the plan lets
// every runtime, and later calibration tables, cost the same op differently.

#include <cstdint>
#include <string_view>

namespace exasim::gpu {

enum class KernelKind : std::uint8_t {
  Gemm,            ///< dense matrix multiply, m x k times k x n, bf16
  FlashAttention,  ///< fused causal attention (forward or backward)
  MemoryBound,     ///< elementwise / normalisation / optimizer: time set by bytes moved
};

[[nodiscard]] std::string_view to_string(KernelKind kind);

/// Operand layout of a row-major product C = A.B as the BLAS library receives it, named as AxoNN's
/// tuned_matmul variants and rocblas-bench (axonn.md 4): torch hands the product to column-major
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
  // GEMM shape (m x k times k x n); zero for other kinds. Used by shape-aware models.
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  GemmLayout layout = GemmLayout::NN;  ///< GEMM only: operand layout the framework runs it in
};

/// A bf16 GEMM of m x k by k x n: 2mnk flops, operands and result read/written once.
[[nodiscard]] Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout = GemmLayout::NN);

}  // namespace exasim::gpu
