#pragma once
// A cache-blocked fp32 GEMM on the host CPU: the "device" the microbenchmark can always measure, so the
// measuring pipeline (shapes -> timings -> calibration CSV) is exercised on machines without a GPU.
//
// LIMITATIONS: single-threaded, no SIMD intrinsics (the compiler vectorises the inner loop); it measures
// this host, not a GPU, and its rows carry the device name the user gives.

#include <cstdint>

namespace exasim::bench {

/// Median seconds of `repeats` runs of C = A x B (m x k by k x n, fp32), after one warm-up run.
[[nodiscard]] double time_host_gemm(std::int64_t m, std::int64_t n, std::int64_t k, int repeats);

}  // namespace exasim::bench
