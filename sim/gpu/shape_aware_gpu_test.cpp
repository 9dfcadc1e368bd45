#include "sim/gpu/shape_aware_gpu.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
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
  CHECK(gpu.time_s(shapeless) == Approx(1e12 / 794.5e12 + gpu.device().kernel_launch_s.value));
  CHECK(gpu.spec().name == "h100-sxm");
  CHECK(gpu.spec().gemm_efficiency == Approx(794.5 / 989.0));
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
    CHECK(gpu.time_s(attn) ==
          Approx(1e13 / (d.peak_bf16_flops.value * d.attention_efficiency.value) + d.kernel_launch_s.value));
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

TEST_CASE("fp16 GEMMs run at the fp16 peak and fp32 GEMMs at the fp32 GEMM rate", "[unit]") {
  for (const auto& d : devices()) {
    INFO(d.name);
    ShapeAwareGpu gpu(d);
    const auto bf16 = gpu.estimate_gemm(gemm(8192, 8192, 8192));
    const auto fp16 = gpu.estimate_gemm(gemm(8192, 8192, 8192, GemmLayout::NN, DType::Fp16));
    const auto fp32 = gpu.estimate_gemm(gemm(8192, 8192, 8192, GemmLayout::NN, DType::Fp32));
    // Same tiles and waves, so the compute times are in the inverse ratio of the peaks.
    CHECK(fp16.compute_s / bf16.compute_s == Approx(d.peak_bf16_flops.value / d.peak_fp16_flops.value));
    CHECK(fp32.compute_s / bf16.compute_s == Approx(d.peak_bf16_flops.value / d.peak_fp32_gemm_flops.value));
    // A large fp32 GEMM stays compute bound, so its whole time follows the fp32 GEMM rate.
    CHECK_FALSE(fp32.memory_bound());
    CHECK(fp32.time_s / bf16.time_s == Approx(d.peak_bf16_flops.value / d.peak_fp32_gemm_flops.value).epsilon(0.01));
    CHECK(gpu.time_s(gemm(8192, 8192, 8192, GemmLayout::NN, DType::Fp32)) == Approx(fp32.time_s));
  }
  // A100 runs fp32 GEMMs on its CUDA cores: 19.5 TF against 312 TF bf16, 16x slower.
  auto a100 = model("a100-40gb");
  CHECK(a100.gemm_time_s(8192, 8192, 8192) * 16 ==
        Approx(a100.estimate_gemm(gemm(8192, 8192, 8192, GemmLayout::NN, DType::Fp32)).time_s).epsilon(0.01));
  // The fp16 peak is the one used, not the bf16 one: halve it and fp16 GEMMs take twice as long.
  DeviceSpec slow_fp16 = *find_device("h100-sxm");
  slow_fp16.peak_fp16_flops.value /= 2;
  ShapeAwareGpu h(slow_fp16);
  CHECK(h.estimate_gemm(gemm(8192, 8192, 8192, GemmLayout::NN, DType::Fp16)).compute_s ==
        Approx(2 * h.estimate_gemm(gemm(8192, 8192, 8192)).compute_s));
  // Shapeless GEMMs and flash attention use the dtype's peak too.
  Kernel shapeless{KernelKind::Gemm, 1e12, 1e6};
  shapeless.dtype = DType::Fp32;
  CHECK(a100.time_s(shapeless) == Approx(1e12 / (19.5e12 * 271.2 / 312.0) + 5e-6));
  Kernel attn{KernelKind::FlashAttention, 1e13, 1e8};
  attn.dtype = DType::Fp16;
  CHECK(h.time_s(attn) == Approx(1e13 / (989e12 / 2 * 0.40) + 5e-6));
}

TEST_CASE("fp8 GEMMs run at the FP8 peak times the fp8 fraction, and read 1-byte operands", "[unit]") {
  const auto fp8 = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    return gemm(m, n, k, GemmLayout::NN, DType::Fp8);
  };
  for (const auto& d : devices()) {
    if (!d.has_fp8()) continue;
    INFO(d.name);
    ShapeAwareGpu gpu(d);
    // A large compute-bound GEMM: same tiles and waves in both types, so the time ratio is the ratio of the
    // sustained rates, peak x fraction.
    const auto bf16_e = gpu.estimate_gemm(gemm(8192, 8192, 8192));
    const auto fp8_e = gpu.estimate_gemm(fp8(8192, 8192, 8192));
    CHECK_FALSE(fp8_e.memory_bound());
    CHECK(bf16_e.compute_s / fp8_e.compute_s == Approx(d.peak_fp8_flops.value * d.gemm_fp8_achievable_fraction.value /
                                                       (d.peak_bf16_flops.value * d.gemm_achievable_fraction.value)));
    // With equal fractions the ratio is the peak ratio: 2 on every shipped part (1979/989 on Hopper).
    DeviceSpec equal = d;
    equal.gemm_fp8_achievable_fraction = equal.gemm_achievable_fraction;
    ShapeAwareGpu same(equal);
    CHECK(same.estimate_gemm(gemm(8192, 8192, 8192)).compute_s / same.estimate_gemm(fp8(8192, 8192, 8192)).compute_s ==
          Approx(d.peak_fp8_flops.value / d.peak_bf16_flops.value));
    CHECK(d.peak_fp8_flops.value / d.peak_bf16_flops.value == Approx(2).epsilon(0.001));
  }
  // H100 SXM: [KR1]'s measured rates, 1402.6 TF fp8 against 794.5 TF bf16.
  auto h100 = model("h100-sxm");
  CHECK(h100.gemm_time_s(8192, 8192, 8192) / h100.estimate_gemm(fp8(8192, 8192, 8192)).time_s ==
        Approx(1402.6 / 794.5).epsilon(0.005));
  // Bytes: 1-byte operands, a bf16 result (m k + k n + 2 m n).
  CHECK(fp8(1024, 512, 256).bytes == 1024.0 * 256 + 256.0 * 512 + 2 * 1024.0 * 512);
  // No FP8 on A100: a caller bug (the scenario loader refuses training.dtype fp8 there).
  auto a100 = model("a100-80gb");
  CHECK_THROWS_AS(a100.estimate_gemm(fp8(128, 128, 128)), std::invalid_argument);
  Kernel shapeless{KernelKind::Gemm, 1e12, 1e6};
  shapeless.dtype = DType::Fp8;
  CHECK_THROWS_AS(a100.time_s(shapeless), std::invalid_argument);
  // A device with an FP8 peak but no fraction is inconsistent.
  DeviceSpec broken = *find_device("a100-80gb");
  broken.peak_fp8_flops.value = 1e15;
  CHECK_THROWS_AS(ShapeAwareGpu(broken), std::invalid_argument);
}

TEST_CASE("a batched GEMM runs its products' tiles together in waves over the compute units", "[unit]") {
  const DeviceSpec d = *find_device("a100-40gb");  // 108 SMs, 128x128 tiles
  ShapeAwareGpu gpu(d);
  // 32 products of 512 x 4096 by 4096 x 512: 32 x 4 x 4 = 512 tiles, ceil(512 / 108) = 5 waves.
  const auto k = batched_gemm(32, 512, 512, 4096);
  const auto e = gpu.estimate_gemm(k);
  CHECK(e.tiles == 512);
  CHECK(e.waves == 5);
  const double per_sm = 271.2e12 / 108;
  CHECK(e.compute_s == Approx(5 * 2.0 * 128 * 128 * (4096 + 128) / per_sm));
  CHECK(e.memory_s == Approx(32 * 2.0 * (512.0 * 4096 * 2 + 512.0 * 512) / (1.555e12 * 0.8)));
  CHECK(gpu.time_s(k) == Approx(std::max(e.compute_s, e.memory_s) + 5e-6));
  // Batching fills waves that one small product leaves empty: 100 products of one tile each take one
  // wave, as long as a single one-tile GEMM.
  CHECK(gpu.estimate_gemm(batched_gemm(100, 128, 128, 4096)).compute_s ==
        Approx(gpu.estimate_gemm(gemm(128, 128, 4096)).compute_s));
  CHECK(gpu.estimate_gemm(batched_gemm(109, 128, 128, 4096)).waves == 2);
  CHECK_THROWS_AS(gpu.estimate_gemm(batched_gemm(0, 128, 128, 128)), std::invalid_argument);
}

TEST_CASE("each memory-bound family streams at its own efficiency", "[unit]") {
  const double bytes = 3e8;
  for (const auto& d : devices()) {
    INFO(d.name);
    ShapeAwareGpu gpu(d);
    for (int f = 0; f < kMemoryFamilies; ++f) {
      const auto family = static_cast<MemoryFamily>(f);
      INFO(to_string(family));
      CHECK(gpu.time_s(memory_kernel(family, bytes)) ==
            Approx(bytes / (d.hbm_bandwidth_Bps.value * d.efficiency(family).value) + d.kernel_launch_s.value));
    }
  }
  // Give every family a different efficiency: each kernel must pick its own.
  DeviceSpec d = *find_device("h200");
  for (int f = 0; f < kMemoryFamilies; ++f)
    (d.*DeviceSpec::efficiency_figure(static_cast<MemoryFamily>(f))).value = 0.1 * (f + 1);
  ShapeAwareGpu gpu(d);
  for (int f = 0; f < kMemoryFamilies; ++f) {
    INFO(to_string(static_cast<MemoryFamily>(f)));
    CHECK(gpu.time_s(memory_kernel(static_cast<MemoryFamily>(f), bytes)) ==
          Approx(bytes / (4.8e12 * 0.1 * (f + 1)) + 5e-6));
  }
  // The elementwise figure is memory_efficiency, which also prices GEMM bytes.
  CHECK(&(d.*DeviceSpec::efficiency_figure(MemoryFamily::Elementwise)) == &d.memory_efficiency);
}
