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
// square GEMM lands on the measured figure less its small quantization losses.
//
//   tiles     = ceil(m / tile_m) * ceil(n / tile_n)
//   waves     = ceil(tiles / CUs)
//   compute_s = waves * 2 * tile_m * tile_n * (k + k_overhead) / (peak * achievable / CUs) * layout_factor
//   memory_s  = bytes / (HBM bw * memory efficiency)
//   time      = max(compute_s, memory_s) + launch
//
// Flash attention: max(flops / (peak * attention eff.), bytes / (bw * mem eff.)) + launch, as RooflineGpu.
// Memory-bound kernels: max(flops / fp32 vector peak, bytes / (bw * mem eff.)) + launch; the fp32 term only
// matters for arithmetic-heavy elementwise kernels, which run on vector units, not tensor cores.
//
// LIMITATIONS:
//  - one fixed tile per device; real libraries pick among many tiles, split k (split-k / stream-k) and
//    schedule persistent kernels, which soften wave quantization for some shapes; this model is
//    pessimistic for those shapes;
//  - GEMM bytes are the ideal "read A, B once, write C once"; re-reads of operands by tiles that do not
//    fit in L2 are ignored, as are L2/LLC capacity and bank effects;
//  - the layout factor is one number per device and layout, independent of shape; the one measured
//    figure (MI250X TN, axonn.md 4) is shape-specific;
//  - a GEMM kernel without m, n, k (hand-built descriptors) falls back to flops / achievable rate;
//  - no clock throttling, power caps, concurrent kernels, or SMs/CUs taken by communication kernels;
//  - attention and streaming efficiencies are per-device constants (estimates): no dependence on head
//    dimension, sequence length, or access pattern.

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
  double time_s = 0;     ///< max(compute_s, memory_s) + launch
  [[nodiscard]] bool memory_bound() const { return memory_s > compute_s; }
};

class ShapeAwareGpu final : public GpuModel {
 public:
  explicit ShapeAwareGpu(DeviceSpec device);

  /// GEMMs are costed in the layout the kernel carries.
  [[nodiscard]] double time_s(const Kernel& kernel) const override;
  [[nodiscard]] const GpuSpec& spec() const override { return spec_; }
  [[nodiscard]] const DeviceSpec& device() const { return device_; }

  /// A bf16 GEMM of m x k by k x n with the given operand layout. m, n, k must be positive (std::invalid_argument otherwise: a
  /// caller bug, not user input).
  [[nodiscard]] GemmEstimate estimate_gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                           GemmLayout layout = GemmLayout::NN) const;
  [[nodiscard]] double gemm_time_s(std::int64_t m, std::int64_t n, std::int64_t k,
                                   GemmLayout layout = GemmLayout::NN) const {
    return estimate_gemm(m, n, k, layout).time_s;
  }

 private:
  [[nodiscard]] double layout_factor(GemmLayout layout) const;
  [[nodiscard]] double memory_s(double bytes) const;

  DeviceSpec device_;
  GpuSpec spec_;
};

}  // namespace exasim::gpu
