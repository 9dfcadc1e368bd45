#include "sim/gpu/devices.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/gpu_model.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace exasim::gpu;

namespace {
std::vector<const Figure*> figures(const DeviceSpec& d) {
  return {&d.peak_bf16_flops,      &d.peak_fp16_flops,    &d.peak_fp32_flops,
          &d.peak_fp32_gemm_flops, &d.hbm_bandwidth_Bps,  &d.hbm_capacity_bytes,
          &d.compute_units,        &d.clock_hz,           &d.gemm_achievable_fraction,
          &d.attention_efficiency, &d.memory_efficiency,  &d.norm_efficiency,
          &d.softmax_efficiency,   &d.dropout_efficiency, &d.activation_efficiency,
          &d.optimizer_efficiency, &d.kernel_launch_s,    &d.layout_nt_factor,
          &d.layout_tn_factor,     &d.gemm_tile_m,        &d.gemm_tile_n,
          &d.gemm_k_overhead,      &d.busy_power_w,       &d.idle_power_w};
}
}  // namespace

TEST_CASE("the device table lists the ten supported devices", "[unit]") {
  CHECK(device_names() == std::vector<std::string>{"mi250x-gcd", "a100-40gb", "a100-80gb", "gh200", "h100-sxm", "h200",
                                                   "mi300x", "mi325x", "b200", "gb200"});
  for (const auto& name : device_names()) {
    auto d = find_device(name);
    REQUIRE(d.has_value());
    CHECK(d->name == name);
  }
  CHECK_FALSE(find_device("a100").has_value());
  CHECK_FALSE(find_device("MI250X-GCD").has_value());  // names are exact
}

TEST_CASE("every device figure is positive and says where it came from", "[unit]") {
  for (const auto& d : devices()) {
    INFO(d.name);
    for (const Figure* f : figures(d)) {
      CHECK(f->value > 0);
      CHECK_FALSE(f->source.empty());
    }
    CHECK(d.gemm_achievable_fraction.value < 1);
    CHECK(d.attention_efficiency.value <= 1);
    CHECK(d.memory_efficiency.value <= 1);
    // Peak = CUs x flop/clk/CU x clock must hold to within rounding for the clocks and CU counts given.
    // Dense bf16 flop/clk per SM/CU: CDNA2 1024, CDNA3 and Ampere 2048, Hopper 4096, Blackwell 8192.
    double per_clock = d.peak_bf16_flops.value / (d.compute_units.value * d.clock_hz.value);
    const bool cdna3 = d.name == "mi300x" || d.name == "mi325x", blackwell = d.name == "b200" || d.name == "gb200";
    CHECK(per_clock == Approx(d.name == "mi250x-gcd"                  ? 1024
                              : d.name.rfind("a100", 0) == 0 || cdna3 ? 2048
                              : blackwell                             ? 8192
                                                                      : 4096)
                           .epsilon(0.01));
  }
}

TEST_CASE("achievable GEMM fractions are the measured microbenchmark figures", "[unit]") {
  // [KR1]'s maximum achievable matmul rates for A100 and H100 (H200: the same silicon), [S2]'s for the
  // others.
  CHECK(find_device("a100-40gb")->achievable_gemm_flops() == Approx(271.2e12));
  CHECK(find_device("a100-80gb")->achievable_gemm_flops() == Approx(271.2e12));
  CHECK(find_device("mi250x-gcd")->achievable_gemm_flops() == Approx(125e12));
  CHECK(find_device("gh200")->achievable_gemm_flops() == Approx(813e12));
  for (const char* name : {"h100-sxm", "h200"}) {
    auto d = find_device(name);
    CHECK(d->achievable_gemm_flops() == Approx(794.5e12));
    CHECK(d->gemm_achievable_fraction.source.find("[KR1]") != std::string::npos);
  }
  // AMD's own maximum achievable rates ([KR3]).
  CHECK(find_device("mi300x")->achievable_gemm_flops() == Approx(708e12));
  CHECK(find_device("mi325x")->achievable_gemm_flops() == Approx(843e12));
  // No Blackwell GEMM is measured: H100 SXM's fractions, marked estimate.
  for (const char* name : {"b200", "gb200"}) {
    auto d = find_device(name);
    CHECK(d->gemm_achievable_fraction.value == Approx(794.5 / 989));
    CHECK(d->gemm_fp8_achievable_fraction.value == Approx(1402.6 / 1979));
    for (const Figure* f : {&d->gemm_achievable_fraction, &d->gemm_fp8_achievable_fraction})
      CHECK(f->source.find("estimate, unconfirmed: H100 SXM's measured") == 0);
  }
  for (const auto& d : devices())
    if (d.name != "b200" && d.name != "gb200")
      CHECK(d.gemm_achievable_fraction.source.find("estimate") == std::string::npos);
}

TEST_CASE("FP8 peaks and fractions: datasheet peaks, measured fractions, none on A100 and MI250X", "[unit]") {
  // Dense FP8 peaks, half the datasheets' sparse figures ([H2][H8][H9][H10][H11][H12]).
  const std::pair<const char*, double> peaks[] = {{"h100-sxm", 1979e12}, {"h200", 1979e12},     {"gh200", 1979e12},
                                                  {"mi300x", 2614.9e12}, {"mi325x", 2614.9e12}, {"b200", 4.5e15},
                                                  {"gb200", 5e15}};
  for (const auto& [name, peak] : peaks) {
    INFO(name);
    auto d = find_device(name);
    CHECK(d->has_fp8());
    CHECK(d->peak_flops(DType::Fp8) == peak);
    CHECK_FALSE(d->peak_fp8_flops.source.empty());
    CHECK(d->gemm_fp8_achievable_fraction.value > 0);
    CHECK(d->gemm_fp8_achievable_fraction.value < d->gemm_achievable_fraction.value);  // fp8 reaches less of its peak
    CHECK(d->achievable_gemm_flops(DType::Fp8) == Approx(peak * d->gemm_fp8_achievable_fraction.value));
  }
  // Measured fp8 rates: [KR1] H100 SXM (H200 and GH200 reuse it), [KR3] AMD's.
  CHECK(find_device("h100-sxm")->achievable_gemm_flops(DType::Fp8) == Approx(1402.6e12));
  CHECK(find_device("mi300x")->achievable_gemm_flops(DType::Fp8) == Approx(1273e12));
  CHECK(find_device("mi325x")->achievable_gemm_flops(DType::Fp8) == Approx(1519e12));
  for (const char* name : {"a100-40gb", "a100-80gb", "mi250x-gcd"}) {
    INFO(name);
    auto d = find_device(name);
    CHECK_FALSE(d->has_fp8());
    CHECK(d->peak_flops(DType::Fp8) == 0);
    CHECK_FALSE(d->peak_fp8_flops.source.empty());
  }
  CHECK(fp8_device_names() == "gh200, h100-sxm, h200, mi300x, mi325x, b200, gb200");
}

TEST_CASE("vendor memory figures match docs/sources.md", "[unit]") {
  CHECK(find_device("mi250x-gcd")->hbm_capacity_bytes.value == 64e9);
  CHECK(find_device("a100-40gb")->hbm_bandwidth_Bps.value == 1.555e12);
  CHECK(find_device("a100-80gb")->hbm_bandwidth_Bps.value == 2.039e12);
  CHECK(find_device("gh200")->hbm_capacity_bytes.value == 96e9);
  CHECK(find_device("h100-sxm")->hbm_bandwidth_Bps.value == 3.35e12);
  CHECK(find_device("h200")->hbm_capacity_bytes.value == 141e9);
  CHECK(find_device("mi300x")->hbm_bandwidth_Bps.value == 5.3e12);
  CHECK(find_device("mi300x")->hbm_capacity_bytes.value == 192e9);
  CHECK(find_device("mi325x")->hbm_bandwidth_Bps.value == 6e12);
  CHECK(find_device("mi325x")->hbm_capacity_bytes.value == 256e9);
  CHECK(find_device("b200")->hbm_bandwidth_Bps.value == 8e12);
  CHECK(find_device("b200")->hbm_capacity_bytes.value == 180e9);
  CHECK(find_device("gb200")->hbm_bandwidth_Bps.value == 8e12);
  CHECK(find_device("gb200")->hbm_capacity_bytes.value == 186e9);
}

TEST_CASE("bf16 peaks of the CDNA3 and Blackwell parts are the datasheets' dense figures", "[unit]") {
  CHECK(find_device("mi300x")->peak_bf16_flops.value == 1307.4e12);
  CHECK(find_device("mi325x")->peak_bf16_flops.value == 1307.4e12);
  CHECK(find_device("b200")->peak_bf16_flops.value == 2.25e15);
  CHECK(find_device("gb200")->peak_bf16_flops.value == 2.5e15);
}

TEST_CASE("MI250X is the only device with a TN layout penalty, and it is marked an estimate", "[unit]") {
  for (const auto& d : devices()) {
    INFO(d.name);
    if (d.name == "mi250x-gcd") {
      CHECK(d.layout_tn_factor.value > 1);
      CHECK(d.layout_tn_factor.source.find("estimate, unconfirmed") != std::string::npos);
    } else {
      CHECK(d.layout_tn_factor.value == 1);
    }
  }
}

TEST_CASE("require_device names the known devices when the name is unknown", "[unit]") {
  CHECK(require_device("h200", "scenario.json", "gpu.device").name == "h200");
  try {
    (void)require_device("b300", "scenario.json", "gpu.device");
    FAIL("expected InputError");
  } catch (const exasim::InputError& e) {
    CHECK(e.source() == "scenario.json");
    CHECK(e.field() == "gpu.device");
    CHECK(std::string(e.what()).find("mi250x-gcd") != std::string::npos);
  }
}

TEST_CASE("to_gpu_spec carries the roofline numbers", "[unit]") {
  auto d = *find_device("a100-40gb");
  GpuSpec s = to_gpu_spec(d);
  CHECK(s.name == "a100-40gb");
  CHECK(s.peak_bf16_flops == 312e12);
  CHECK(s.gemm_efficiency == Approx(271.2 / 312.0));
  CHECK(s.hbm_bandwidth_Bps == 1.555e12);
  CHECK(s.hbm_capacity_bytes == 40e9);
}

TEST_CASE("fp16 peaks equal bf16 ones, fp32 GEMMs run at the datasheet rate without TF32", "[unit]") {
  for (const auto& d : devices()) {
    INFO(d.name);
    CHECK(d.peak_fp16_flops.value == d.peak_bf16_flops.value);
    CHECK(d.peak_fp16_flops.source.find("estimate") == std::string::npos);  // backed by docs/sources.md
    CHECK(d.peak_fp32_gemm_flops.source.find("datasheet") != std::string::npos);
    CHECK(d.peak_fp32_gemm_flops.source.find("estimate, unconfirmed") != std::string::npos);  // not in docs/sources.md
    CHECK(d.peak_flops(DType::Bf16) == d.peak_bf16_flops.value);
    CHECK(d.peak_flops(DType::Fp16) == d.peak_fp16_flops.value);
    CHECK(d.peak_flops(DType::Fp32) == d.peak_fp32_gemm_flops.value);
    CHECK(d.achievable_gemm_flops(DType::Fp32) ==
          Approx(d.peak_fp32_gemm_flops.value * d.gemm_achievable_fraction.value));
  }
  CHECK(find_device("a100-80gb")->peak_fp32_gemm_flops.value == 19.5e12);
  CHECK(find_device("h100-sxm")->peak_fp32_gemm_flops.value == 67e12);
  CHECK(find_device("gh200")->peak_fp32_gemm_flops.value == 67e12);
  // MI250X has FP32 matrix cores: twice its vector fp32 rate (95.7 TF per module / 2 GCDs).
  CHECK(find_device("mi250x-gcd")->peak_fp32_gemm_flops.value == Approx(95.7e12 / 2));
  CHECK(find_device("mi250x-gcd")->peak_fp32_gemm_flops.value ==
        Approx(2 * find_device("mi250x-gcd")->peak_fp32_flops.value).epsilon(0.01));
}

TEST_CASE("every memory family has an estimated efficiency per device, reductions below plain streaming", "[unit]") {
  for (const auto& d : devices()) {
    INFO(d.name);
    for (int f = 0; f < kMemoryFamilies; ++f) {
      const auto family = static_cast<MemoryFamily>(f);
      INFO(to_string(family));
      CHECK(d.efficiency(family).value > 0);
      CHECK(d.efficiency(family).value <= 1);
      CHECK(d.efficiency(family).source.rfind("estimate, unconfirmed", 0) == 0);
    }
    const double streaming = d.efficiency(MemoryFamily::Elementwise).value;
    CHECK(&d.efficiency(MemoryFamily::Elementwise) == &d.memory_efficiency);
    for (auto family : {MemoryFamily::Norm, MemoryFamily::Softmax, MemoryFamily::Dropout, MemoryFamily::Optimizer})
      CHECK(d.efficiency(family).value < streaming);
    CHECK(d.efficiency(MemoryFamily::Activation).value == streaming);
  }
  // The ported fused kernels are the AMD GPUs' weak spot, and their sources say so.
  const auto a100 = *find_device("a100-40gb");
  for (const char* name : {"mi250x-gcd", "mi300x", "mi325x"}) {
    const auto amd = *find_device(name);
    CHECK(amd.softmax_efficiency.value < a100.softmax_efficiency.value);
    CHECK(amd.softmax_efficiency.source.find("AMD") != std::string::npos);
  }
  CHECK(a100.softmax_efficiency.source.find("AMD") == std::string::npos);
}
