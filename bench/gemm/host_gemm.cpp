#include "bench/gemm/host_gemm.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace exasim::bench {

namespace {

// 64x64x256 blocks keep one block of A, B and C in L2 on common CPUs.
constexpr std::int64_t kBm = 64, kBn = 64, kBk = 256;

void gemm(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k) {
  std::fill(c, c + m * n, 0.0f);
  for (std::int64_t i0 = 0; i0 < m; i0 += kBm) {
    for (std::int64_t p0 = 0; p0 < k; p0 += kBk) {
      for (std::int64_t j0 = 0; j0 < n; j0 += kBn) {
        const std::int64_t i1 = std::min(m, i0 + kBm), p1 = std::min(k, p0 + kBk), j1 = std::min(n, j0 + kBn);
        for (std::int64_t i = i0; i < i1; ++i) {
          for (std::int64_t p = p0; p < p1; ++p) {
            const float aip = a[i * k + p];
            const float* brow = b + p * n;
            float* crow = c + i * n;
            for (std::int64_t j = j0; j < j1; ++j) crow[j] += aip * brow[j];
          }
        }
      }
    }
  }
}

}  // namespace

double time_host_gemm(std::int64_t m, std::int64_t n, std::int64_t k, int repeats) {
  std::vector<float> a(static_cast<std::size_t>(m * k), 1.0f), b(static_cast<std::size_t>(k * n), 0.5f),
      c(static_cast<std::size_t>(m * n));
  gemm(a.data(), b.data(), c.data(), m, n, k);  // warm-up: page faults, caches
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    gemm(a.data(), b.data(), c.data(), m, n, k);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  volatile float sink = c[0];  // keep the result alive
  (void)sink;
  return times[times.size() / 2];
}

}  // namespace exasim::bench
