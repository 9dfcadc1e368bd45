#include "sim/gpu/shape_aware_gpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exasim::gpu {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

void require_positive(double value, const std::string& device, const std::string& what) {
  if (!(value > 0)) throw std::invalid_argument("ShapeAwareGpu: device " + device + " has non-positive " + what);
}

}  // namespace

ShapeAwareGpu::ShapeAwareGpu(DeviceSpec device) : device_(std::move(device)), spec_(to_gpu_spec(device_)) {
  // Checked once here so that time_s never divides by zero or returns a negative time.
  const auto& d = device_;
  require_positive(d.peak_bf16_flops.value, d.name, "peak_bf16_flops");
  require_positive(d.peak_fp16_flops.value, d.name, "peak_fp16_flops");
  require_positive(d.peak_fp32_flops.value, d.name, "peak_fp32_flops");
  require_positive(d.peak_fp32_gemm_flops.value, d.name, "peak_fp32_gemm_flops");
  require_positive(d.hbm_bandwidth_Bps.value, d.name, "hbm_bandwidth_Bps");
  require_positive(d.compute_units.value, d.name, "compute_units");
  require_positive(d.gemm_achievable_fraction.value, d.name, "gemm_achievable_fraction");
  // FP8 is optional (A100, MI250X have none), but a device with an FP8 peak needs its fraction.
  if (d.peak_fp8_flops.value < 0 || (d.has_fp8() && !(d.gemm_fp8_achievable_fraction.value > 0)))
    throw std::invalid_argument("ShapeAwareGpu: device " + d.name + " has an FP8 peak without a positive fraction");
  require_positive(d.attention_efficiency.value, d.name, "attention_efficiency");
  for (int f = 0; f < kMemoryFamilies; ++f) {
    const auto family = static_cast<MemoryFamily>(f);
    require_positive(d.efficiency(family).value, d.name, std::string(to_string(family)) + " efficiency");
  }
  require_positive(d.layout_nt_factor.value, d.name, "layout_nt_factor");
  require_positive(d.layout_tn_factor.value, d.name, "layout_tn_factor");
  require_positive(d.gemm_tile_m.value, d.name, "gemm_tile_m");
  require_positive(d.gemm_tile_n.value, d.name, "gemm_tile_n");
  if (d.gemm_k_overhead.value < 0 || d.kernel_launch_s.value < 0)
    throw std::invalid_argument("ShapeAwareGpu: device " + d.name + " has a negative k overhead or launch time");
}

double ShapeAwareGpu::layout_factor(GemmLayout layout) const {
  switch (layout) {
    case GemmLayout::NN: return 1.0;
    case GemmLayout::NT: return device_.layout_nt_factor.value;
    case GemmLayout::TN: return device_.layout_tn_factor.value;
  }
  return 1.0;
}

double ShapeAwareGpu::memory_s(double bytes, MemoryFamily family) const {
  return bytes / (device_.hbm_bandwidth_Bps.value * device_.efficiency(family).value);
}

double ShapeAwareGpu::achievable_gemm_flops(DType dtype) const {
  // The scenario loader refuses training.dtype fp8 on such a device; reaching here is a caller's bug.
  if (dtype == DType::Fp8 && !device_.has_fp8())
    throw std::invalid_argument("ShapeAwareGpu: device " + device_.name + " has no FP8 tensor cores");
  return device_.achievable_gemm_flops(dtype);
}

GemmEstimate ShapeAwareGpu::estimate_gemm(const Kernel& g) const {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0)
    throw std::invalid_argument("ShapeAwareGpu::estimate_gemm: m, n, k and batch must be positive");
  const auto tile_m = static_cast<std::int64_t>(device_.gemm_tile_m.value);
  const auto tile_n = static_cast<std::int64_t>(device_.gemm_tile_n.value);
  const std::int64_t cus = device_.compute_unit_count();

  GemmEstimate e;
  e.tiles = g.batch * ceil_div(g.m, tile_m) * ceil_div(g.n, tile_n);
  e.waves = ceil_div(e.tiles, cus);
  // The measured rate is a whole-device figure on shapes where every CU is busy, so one CU's share is the
  // rate of a full wave; a wave then takes one tile's worth of work at that share.
  const double per_cu_flops = achievable_gemm_flops(g.dtype) / static_cast<double>(cus);
  const double tile_flops = 2.0 * static_cast<double>(tile_m) * static_cast<double>(tile_n) *
                            (static_cast<double>(g.k) + device_.gemm_k_overhead.value);
  e.compute_s = static_cast<double>(e.waves) * tile_flops / per_cu_flops * layout_factor(g.layout);
  // The descriptor's bytes, not the ideal ones, in case the plan accounts extra traffic.
  e.memory_s = memory_s(g.bytes);
  e.time_s = std::max(e.compute_s, e.memory_s) + device_.kernel_launch_s.value;
  return e;
}

double ShapeAwareGpu::time_s(const Kernel& kernel) const {
  const double launch = device_.kernel_launch_s.value;
  switch (kernel.kind) {
    case KernelKind::Gemm: {
      if (kernel.m > 0 && kernel.n > 0 && kernel.k > 0) return estimate_gemm(kernel).time_s;
      // Without a shape there is nothing to quantize: cost it at the measured large-GEMM rate.
      return std::max(kernel.flops / achievable_gemm_flops(kernel.dtype), memory_s(kernel.bytes)) + launch;
    }
    case KernelKind::FlashAttention: {
      double compute = kernel.flops / (device_.peak_flops(kernel.dtype) * device_.attention_efficiency.value);
      return std::max(compute, memory_s(kernel.bytes)) + launch;
    }
    case KernelKind::MemoryBound: {
      double compute = kernel.flops / device_.peak_fp32_flops.value;
      return std::max(compute, memory_s(kernel.bytes, kernel.family)) + launch;
    }
  }
  return launch;
}

}  // namespace exasim::gpu
