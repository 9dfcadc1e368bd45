#pragma once
// Shape-aware GPU model: GEMM time depends on m, n, k and operand layout, not only on flops.
//
// Why: tensor parallelism cuts GEMMs into thinner pieces, and the roofline model (one efficiency per
// kernel kind) then predicts that splitting is free. Real GEMM libraries lose time in three places that
// grow as shapes shrink, and this model charges each:
//  - tile quantization: the output is computed in tile_m x tile_n tiles, so an m or n that is not a
//    multiple of the tile pays for the padded remainder (a 64-row GEMM costs as much as a 128-row one);
//  - wave quantization: tiles run in waves of one tile per compute unit (SM/CU), so a last partial wave
//    costs as much as a full one;
//  - short k: each tile has a fixed prologue/epilogue cost (k_overhead k-iterations) that a small k
//    cannot amortise.
// The per-CU rate is the device's measured large-GEMM rate (devices.hpp) spread over its CUs, so a large
// square GEMM lands on the measured figure less its small quantization losses. A batched GEMM (torch.bmm)
// spreads the tiles of all its products over the CUs together, so it is quantized as one grid.
//
//   tiles     = batch * ceil(m / tile_m) * ceil(n / tile_n)
//   waves     = ceil(tiles / CUs)
//   compute_s = waves * 2 * tile_m * tile_n * (k + k_overhead) / (peak[dtype] * achievable / CUs) * layout_factor
//   memory_s  = bytes / (HBM bw * memory efficiency)      (bytes from the descriptor)
//   time      = max(compute_s, memory_s) + launch
//
// peak[dtype] is the device's bf16, fp16, fp8 or fp32-GEMM peak, and `achievable` the device's fraction for
// it: the fp8 one for fp8, the bf16 one otherwise (devices.hpp). An fp8 GEMM's bytes are its 1-byte
// operands and its bf16 result (kernel.hpp).
// Flash attention: max(flops / (peak[dtype] * attention eff.), bytes / (bw * mem eff.)) + launch.
// Memory-bound kernels: max(flops / fp32 vector peak, bytes / (bw * family eff.)) + launch, with the
// efficiency of the kernel's family (elementwise, norm, softmax, dropout, activation, optimizer); the fp32
// term only matters for arithmetic-heavy kernels, which run on vector units, not tensor cores.
//
// LIMITATIONS:
//  - one fixed tile per device; real libraries pick among many tiles, split k (split-k / stream-k) and
//    schedule persistent kernels, which soften wave quantization for some shapes; this model is
//    pessimistic for those shapes;
//  - GEMM bytes are the ideal "read A, B once, write C once"; re-reads of operands by tiles that do not
//    fit in L2 are ignored, as are L2/LLC capacity and bank effects;
//  - the layout factor is one number per device and layout, independent of shape; the one measured
//    figure (MI250X TN, docs/axonn.md section 5) is shape-specific;
//  - a GEMM kernel without m, n, k (hand-built descriptors) falls back to flops / achievable rate;
//  - no clock throttling, power caps, concurrent kernels, or SMs/CUs taken by communication kernels;
//  - the achievable GEMM fraction is measured on bf16 and assumed to carry over to fp16 and fp32 GEMMs
//    (no fp16 or fp32 GEMM measurement in docs/sources.md); fp8 has its own (devices.hpp); the tile and k
//    overhead are the bf16 ones for every dtype (fp8 kernels use larger k tiles);
//  - a batched GEMM's products are costed as one grid of tiles; the library's choice of a smaller tile
//    for small m, n (attention scores of short sequences) is not modelled;
//  - attention and memory-family efficiencies are per-device constants (estimates): no dependence on head
//    dimension, sequence length, row length or access pattern.

#include "sim/gpu/devices.hpp"
#include "sim/gpu/gpu_model.hpp"

#include <cstdint>
#include <string_view>

namespace exasim::gpu {

/// How a GEMM's time came about; lets reports and tests explain a prediction.
struct GemmEstimate {
  std::int64_t tiles = 0;
  std::int64_t waves = 0;
  double compute_s = 0;  ///< quantized compute time, layout factor included
  double memory_s = 0;
  double time_s = 0;  ///< max(compute_s, memory_s) + launch
  [[nodiscard]] bool memory_bound() const { return memory_s > compute_s; }
};

class ShapeAwareGpu final : public GpuModel {
 public:
  explicit ShapeAwareGpu(DeviceSpec device);

  /// GEMMs are costed in the layout the kernel carries.
  [[nodiscard]] double time_s(const Kernel& kernel) const override;
  [[nodiscard]] const GpuSpec& spec() const override { return spec_; }
  [[nodiscard]] const DeviceSpec& device() const { return device_; }

  /// A GEMM kernel (batch, m, n, k, layout, dtype and bytes from the descriptor). Its m, n, k and batch
  /// must be positive (std::invalid_argument otherwise: a caller bug, not user input).
  [[nodiscard]] GemmEstimate estimate_gemm(const Kernel& gemm) const;
  /// A single bf16 GEMM of m x k by k x n with the given operand layout.
  [[nodiscard]] GemmEstimate estimate_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                           GemmLayout layout = GemmLayout::NN) const {
    return estimate_gemm(gpu::gemm(m, n, k, layout));
  }
  [[nodiscard]] double gemm_time_s(std::int64_t m, std::int64_t n, std::int64_t k,
                                   GemmLayout layout = GemmLayout::NN) const {
    return estimate_gemm(m, n, k, layout).time_s;
  }

 private:
  [[nodiscard]] double layout_factor(GemmLayout layout) const;
  /// The device's sustained GEMM rate of `dtype`; std::invalid_argument for fp8 on a device without it.
  [[nodiscard]] double achievable_gemm_flops(DType dtype) const;
  [[nodiscard]] double memory_s(double bytes, MemoryFamily family = MemoryFamily::Elementwise) const;

  DeviceSpec device_;
  GpuSpec spec_;
};

}  // namespace exasim::gpu
