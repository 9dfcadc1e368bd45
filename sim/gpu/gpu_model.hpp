#pragma once
// GPU models: how long a kernel takes on one device.
//
// RooflineGpu is the simple model of the first milestone: time = max(flops / (peak x efficiency of the
// kernel kind), bytes / (HBM bandwidth x memory efficiency)) + a fixed launch overhead.
//
// LIMITATIONS:
//  - one efficiency per kernel kind: no tile or wave quantization, no penalty for skinny GEMMs, no
//    operand-layout (NN/NT/TN) effects; these come with the shape-aware model;
//  - it ignores a kernel's dtype and memory family: every GEMM and attention kernel runs against the bf16
//    peak, every memory-bound kernel at the one memory efficiency (the shape-aware model has a peak per
//    dtype and an efficiency per family); a batched GEMM is costed by its total flops and bytes.
//  - no clock throttling, no power caps, no overlap of compute with the GPU's own communication kernels
//    (NCCL/RCCL kernels steal SMs/CUs on real hardware; here communication is free for the GPU).

#include "sim/gpu/kernel.hpp"

#include <memory>
#include <string>

namespace exasim {
class JsonView;
}

namespace exasim::gpu {

/// Numbers of one device. Units in the names: flop/s, bytes/s, bytes, seconds.
struct GpuSpec {
  std::string name;
  double peak_bf16_flops = 0;       ///< vendor peak, dense bf16, per device (per GCD for MI250X)
  double gemm_efficiency = 1;       ///< sustained fraction of peak on large GEMMs (microbenchmark)
  double attention_efficiency = 1;  ///< sustained fraction of peak of flash attention
  double hbm_bandwidth_Bps = 0;
  double memory_efficiency = 1;  ///< sustained fraction of HBM bandwidth of streaming (elementwise) kernels
  double hbm_capacity_bytes = 0;
  double kernel_launch_s = 0;  ///< fixed cost per kernel
};

/// Reads a GPU object ("gpu" in a machine file); every field validated.
[[nodiscard]] GpuSpec load_gpu_spec(const JsonView& view);

class GpuModel {
 public:
  virtual ~GpuModel() = default;
  [[nodiscard]] virtual double time_s(const Kernel& kernel) const = 0;
  [[nodiscard]] virtual const GpuSpec& spec() const = 0;
};

class RooflineGpu final : public GpuModel {
 public:
  explicit RooflineGpu(GpuSpec spec) : spec_(std::move(spec)) {}
  [[nodiscard]] double time_s(const Kernel& kernel) const override;
  [[nodiscard]] const GpuSpec& spec() const override { return spec_; }

 private:
  GpuSpec spec_;
};

}  // namespace exasim::gpu
