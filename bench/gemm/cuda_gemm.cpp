#include "bench/gemm/cuda_gemm.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace exasim::bench {

namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(s));
}
}  // namespace

double time_cuda_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout, int repeats) {
  // cuBLAS is column-major: C^T (n x m) = B^T (n x k) A^T (k x m) computes the row-major C = A B.
  void *a = nullptr, *b = nullptr, *c = nullptr;
  check(cudaMalloc(&a, static_cast<std::size_t>(m * k) * 2), "cudaMalloc A");
  check(cudaMalloc(&b, static_cast<std::size_t>(k * n) * 2), "cudaMalloc B");
  check(cudaMalloc(&c, static_cast<std::size_t>(m * n) * 2), "cudaMalloc C");
  check(cudaMemset(a, 0, static_cast<std::size_t>(m * k) * 2), "memset");
  check(cudaMemset(b, 0, static_cast<std::size_t>(k * n) * 2), "memset");
  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  // Layout letters are cuBLAS's (transa, transb) of this call (kernel.hpp): TN = B stored column-major,
  // NT = A stored column-major.
  const bool ta = layout == gpu::GemmLayout::NT, tb = layout == gpu::GemmLayout::TN;
  const float alpha = 1, beta = 0;
  auto run = [&] {
    check(cublasGemmEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                       static_cast<int>(m), static_cast<int>(k), &alpha, b, CUDA_R_16BF, static_cast<int>(tb ? k : n),
                       a, CUDA_R_16BF, static_cast<int>(ta ? m : k), &beta, c, CUDA_R_16BF, static_cast<int>(n),
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  };
  for (int i = 0; i < 5; ++i) run();
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    check(cudaEventRecord(start), "record");
    run();
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    times.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace exasim::bench
