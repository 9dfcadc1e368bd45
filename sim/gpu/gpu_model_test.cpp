#include "sim/gpu/gpu_model.hpp"

#include <catch2/catch.hpp>

using namespace exasim::gpu;

namespace {
GpuSpec a100_like() {
  GpuSpec s;
  s.name = "test";
  s.peak_bf16_flops = 312e12;
  s.gemm_efficiency = 0.9;
  s.attention_efficiency = 0.5;
  s.hbm_bandwidth_Bps = 1.5e12;
  s.memory_efficiency = 0.8;
  s.hbm_capacity_bytes = 40e9;
  return s;
}
}  // namespace

TEST_CASE("roofline GEMM time is flops over sustained peak when compute bound", "[unit]") {
  RooflineGpu gpu(a100_like());
  auto k = gemm(8192, 8192, 8192);
  CHECK(k.flops == Approx(2.0 * 8192 * 8192 * 8192));
  CHECK(gpu.time_s(k) == Approx(k.flops / (312e12 * 0.9)));
}

TEST_CASE("memory-bound kernels scale with their bytes", "[unit]") {
  RooflineGpu gpu(a100_like());
  Kernel small{KernelKind::MemoryBound, 0, 1e8};
  Kernel big{KernelKind::MemoryBound, 0, 4e8};
  CHECK(gpu.time_s(small) == Approx(1e8 / (1.5e12 * 0.8)));
  CHECK(gpu.time_s(big) == Approx(4 * gpu.time_s(small)));
  // A skinny GEMM with few flops per byte is bound by memory, not compute.
  auto skinny = gemm(8, 8192, 8192);
  CHECK(gpu.time_s(skinny) == Approx(skinny.bytes / (1.5e12 * 0.8)));
}
