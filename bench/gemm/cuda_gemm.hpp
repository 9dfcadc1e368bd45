#pragma once
// cuBLAS bf16 GEMM timing (built only where a CUDA toolkit is found).
//
// LIMITATIONS: one default cuBLAS algorithm per shape (cublasGemmEx with CUBLAS_GEMM_DEFAULT), fp32
// accumulation; no autotuning over algorithms, so a tuned framework may be faster on some shapes.

#include "sim/gpu/kernel.hpp"

#include <cstdint>

namespace exasim::bench {

/// Median seconds of `repeats` timed runs (CUDA events) after warm-up runs.
[[nodiscard]] double time_cuda_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout,
                                    int repeats);

}  // namespace exasim::bench
