#include "sim/gpu/shape_aware_gpu.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace exasim::gpu;

namespace {
ShapeAwareGpu model(const char* name) { return ShapeAwareGpu(*find_device(name)); }
}  // namespace

TEST_CASE("8192^3 GEMMs come within 10% of the measured achievable rate on every device", "[unit]") {
  for (const auto& d : devices()) {
    INFO(d.name);
    ShapeAwareGpu gpu(d);
    const double flops = 2.0 * 8192 * 8192 * 8192;
    const double rate = flops / gpu.gemm_time_s(8192, 8192, 8192);
    CHECK(rate <= d.achievable_gemm_flops());
    CHECK(rate >= 0.9 * d.achievable_gemm_flops());
    CHECK_FALSE(gpu.estimate_gemm(8192, 8192, 8192).memory_bound());
  }
}

TEST_CASE("skinny GEMMs with the same flops as 8192^3 are slower", "[unit]") {
  for (const auto& d : devices()) {
    INFO(d.name);
    ShapeAwareGpu gpu(d);
    const double square = gpu.gemm_time_s(8192, 8192, 8192);
    // Short k: per-tile fixed costs are amortised over only 512 k-iterations (and it is compute bound).
    auto short_k = gpu.estimate_gemm(32768, 32768, 512);
    CHECK_FALSE(short_k.memory_bound());
    CHECK(short_k.time_s > 1.1 * square);
    // Thin m: half of every 128-row tile is padding.
    CHECK(gpu.gemm_time_s(64, 8192 * 128, 8192) > 1.5 * square);
    // The same thin shape is also slower in its compute term alone, not only through memory traffic.
    CHECK(gpu.estimate_gemm(64, 8192 * 128, 8192).compute_s > 1.5 * gpu.estimate_gemm(8192, 8192, 8192).compute_s);
  }
}

TEST_CASE("tile and wave quantization charge for padded work", "[unit]") {
  auto gpu = model("a100-40gb");  // 108 SMs, 128x128 tiles
  // m = 129 needs two row tiles, as many as m = 256.
  CHECK(gpu.estimate_gemm(129, 4096, 4096).tiles == gpu.estimate_gemm(256, 4096, 4096).tiles);
  CHECK(gpu.estimate_gemm(129, 4096, 4096).compute_s == Approx(gpu.estimate_gemm(256, 4096, 4096).compute_s));
  // 108 tiles fill one wave; 109 tiles need two, so take twice as long in compute.
  auto one_wave = gpu.estimate_gemm(128 * 108, 128, 8192);
  auto two_waves = gpu.estimate_gemm(128 * 109, 128, 8192);
  CHECK(one_wave.waves == 1);
  CHECK(two_waves.waves == 2);
  CHECK(two_waves.compute_s == Approx(2 * one_wave.compute_s));
}

TEST_CASE("time_s costs shaped GEMM kernels as NN and shapeless ones at the measured rate", "[unit]") {
  auto gpu = model("h100-sxm");
  CHECK(gpu.time_s(gemm(4096, 1000, 3000)) == Approx(gpu.gemm_time_s(4096, 1000, 3000, GemmLayout::NN)));
  Kernel shapeless{KernelKind::Gemm, 1e12, 1e6};
  CHECK(gpu.time_s(shapeless) == Approx(1e12 / 813e12 + gpu.device().kernel_launch_s.value));
  CHECK(gpu.spec().name == "h100-sxm");
  CHECK(gpu.spec().gemm_efficiency == Approx(813.0 / 989.0));
}

TEST_CASE("memory-bound kernels scale with their bytes and the device's bandwidth", "[unit]") {
  for (const auto& d : devices()) {
    INFO(d.name);
    ShapeAwareGpu gpu(d);
    const double launch = d.kernel_launch_s.value;
    Kernel small{KernelKind::MemoryBound, 0, 1e8};
    Kernel big{KernelKind::MemoryBound, 0, 4e8};
    CHECK(gpu.time_s(small) - launch == Approx(1e8 / (d.hbm_bandwidth_Bps.value * d.memory_efficiency.value)));
    CHECK(gpu.time_s(big) - launch == Approx(4 * (gpu.time_s(small) - launch)));
  }
  // Faster HBM, shorter streaming kernels.
  Kernel k{KernelKind::MemoryBound, 0, 1e9};
  CHECK(model("h200").time_s(k) < model("h100-sxm").time_s(k));
  CHECK(model("a100-80gb").time_s(k) < model("a100-40gb").time_s(k));
  // Arithmetic-heavy elementwise work is bounded by the fp32 vector peak.
  Kernel heavy{KernelKind::MemoryBound, 1e12, 1e6};
  CHECK(model("a100-40gb").time_s(heavy) == Approx(1e12 / 19.5e12 + 5e-6));
}

TEST_CASE("flash attention uses each device's attention efficiency", "[unit]") {
  Kernel attn{KernelKind::FlashAttention, 1e13, 1e8};
  for (const auto& d : devices()) {
    INFO(d.name);
    ShapeAwareGpu gpu(d);
    CHECK(gpu.time_s(attn) == Approx(1e13 / (d.peak_bf16_flops.value * d.attention_efficiency.value) +
                                     d.kernel_launch_s.value));
  }
}

TEST_CASE("TN GEMMs are slower than NN on MI250X but not on NVIDIA devices", "[unit]") {
  auto mi = model("mi250x-gcd");
  CHECK(mi.gemm_time_s(8192, 8192, 8192, GemmLayout::TN) > 1.5 * mi.gemm_time_s(8192, 8192, 8192, GemmLayout::NN));
  CHECK(mi.gemm_time_s(8192, 8192, 8192, GemmLayout::NT) == Approx(mi.gemm_time_s(8192, 8192, 8192)));
  auto h = model("gh200");
  CHECK(h.gemm_time_s(8192, 8192, 8192, GemmLayout::TN) == Approx(h.gemm_time_s(8192, 8192, 8192, GemmLayout::NN)));
  CHECK(to_string(GemmLayout::TN) == "TN");
}

TEST_CASE("invalid shapes and devices are rejected", "[unit]") {
  auto gpu = model("a100-40gb");
  CHECK_THROWS_AS(gpu.estimate_gemm(0, 128, 128), std::invalid_argument);
  CHECK_THROWS_AS(gpu.estimate_gemm(128, -1, 128), std::invalid_argument);
  DeviceSpec broken = *find_device("a100-40gb");
  broken.compute_units.value = 0;
  CHECK_THROWS_AS(ShapeAwareGpu(broken), std::invalid_argument);
}
