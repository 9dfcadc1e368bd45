#pragma once
// Rates measured in profiler traces, for `exasim calibrate --from-trace`: the time of each GEMM shape, the
// bandwidth memory-bound ops reached, the flop rate of attention, and the bus bandwidth of each
// collective size. A GEMM or memory-bound op is a CPU op with recorded shapes (record_shapes=True) and
// the GPU kernels linked to it by External id; its time is the sum of those kernels (a cuBLASLt GEMM and
// its split-K reduction count as one GEMM).
//
// LIMITATIONS:
//  - GEMM shapes only from aten::mm, addmm, bmm and baddbmm (the ops that launch cuBLAS/hipBLASLt);
//    a trace without record_shapes gives no GEMM rates;
//  - the layout is the BLAS call's, read from the kernel name (cuBLAS/CUTLASS `_nt_`, Tensile
//    `Cijk_Alik_Bljk` = TN); empty when the name does not say;
//  - memory-bound bytes are estimated as the op's tensor inputs plus one output the size of its largest
//    input (in-place and reduction ops move less, gathers more);
//  - attention flops are 4 B H L^2 E per forward (2.5 times that backward), i.e. no causal mask, from the
//    query shape of the SDPA / flash / efficient attention ops;
//  - a collective's time is its kernel's duration, so time spent waiting for the slowest peer inside the
//    kernel lowers the bandwidth; each size is represented by the median of its calls.

#include "traces/kernel_class.hpp"
#include "traces/measured.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace exasim::trace {

struct GemmRate {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  std::string dtype;   ///< bf16, fp16 or fp32
  std::string layout;  ///< NN, NT, TN or empty (not named by the kernel)
  std::uint64_t count = 0;
  double time_s = 0;  ///< median over calls
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

/// Work done by a family of kernels: bytes (memory-bound) or flops (attention).
struct WorkRate {
  std::uint64_t ops = 0;
  double work = 0;
  double time_s = 0;
  std::string dtype;  ///< attention: the query's dtype (bf16, fp16, fp32)
  [[nodiscard]] double rate() const { return time_s > 0 ? work / time_s : 0; }
};

struct CollectiveRate {
  CollectiveKind kind = CollectiveKind::Other;
  double bytes = 0;  ///< buffer size S (SCHEMA.md)
  int group_size = 0;
  std::uint64_t count = 0;
  double time_s = 0;  ///< median over calls
  double bus_bandwidth_Bps = 0;
};

struct TraceRates {
  std::vector<GemmRate> gemms;                   ///< sorted by (dtype, batch, m, n, k, layout)
  WorkRate memory;                               ///< bytes
  WorkRate attention;                            ///< flops
  std::vector<CollectiveRate> collectives;       ///< sorted by (kind, group, bytes)
  std::uint64_t gemm_kernels_without_shape = 0;  ///< GEMM kernels whose op had no usable shape
};

[[nodiscard]] TraceRates measure_rates(const std::vector<MeasuredTrace>& traces);

/// NCCL's bus-bandwidth factor (nccl-tests' PERFORMANCE.md): all-reduce 2(n-1)/n; all-gather,
/// reduce-scatter and all-to-all (n-1)/n; broadcast and point-to-point 1; 1 when the group is unknown (<= 1).
[[nodiscard]] double bus_bandwidth_factor(CollectiveKind kind, int group_size);

}  // namespace exasim::trace
