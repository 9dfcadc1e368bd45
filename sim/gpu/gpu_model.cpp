#include "sim/gpu/gpu_model.hpp"

#include "sim/core/json_view.hpp"

#include <algorithm>

namespace exasim::gpu {

GpuSpec load_gpu_spec(const JsonView& v) {
  v.check_keys({"name", "peak_bf16_flops", "gemm_efficiency", "attention_efficiency", "hbm_bandwidth_Bps",
                "memory_efficiency", "hbm_capacity_bytes", "kernel_launch_s", "sources"});
  GpuSpec s;
  s.name = v.string("name");
  s.peak_bf16_flops = v.number("peak_bf16_flops", 0, 1e18);
  s.gemm_efficiency = v.number("gemm_efficiency", 0, 1);
  s.attention_efficiency = v.number("attention_efficiency", 0, 1);
  s.hbm_bandwidth_Bps = v.number("hbm_bandwidth_Bps", 0, 1e15);
  s.memory_efficiency = v.number("memory_efficiency", 0, 1);
  s.hbm_capacity_bytes = v.number("hbm_capacity_bytes", 0, 1e15);
  s.kernel_launch_s = v.number_or("kernel_launch_s", 0, 0, 1, /*min_exclusive=*/false);
  return s;
}

double RooflineGpu::time_s(const Kernel& kernel) const {
  double efficiency = 1;
  switch (kernel.kind) {
    case KernelKind::Gemm: efficiency = spec_.gemm_efficiency; break;
    case KernelKind::FlashAttention: efficiency = spec_.attention_efficiency; break;
    case KernelKind::MemoryBound: efficiency = 1; break;  // flops of streaming kernels never bind
  }
  double compute_s = kernel.flops / (spec_.peak_bf16_flops * efficiency);
  double memory_s = kernel.bytes / (spec_.hbm_bandwidth_Bps * spec_.memory_efficiency);
  return std::max(compute_s, memory_s) + spec_.kernel_launch_s;
}

}  // namespace exasim::gpu
