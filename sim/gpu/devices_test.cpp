#include "sim/gpu/devices.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/gpu_model.hpp"

#include <catch2/catch.hpp>

#include <string>
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
          &d.gemm_k_overhead};
}
}  // namespace

TEST_CASE("the device table lists the six supported devices", "[unit]") {
  CHECK(device_names() ==
        std::vector<std::string>{"mi250x-gcd", "a100-40gb", "a100-80gb", "gh200", "h100-sxm", "h200"});
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
    double per_clock = d.peak_bf16_flops.value / (d.compute_units.value * d.clock_hz.value);
    CHECK(per_clock == Approx(d.name == "mi250x-gcd"         ? 1024
                              : d.name.rfind("a100", 0) == 0 ? 2048
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
  for (const auto& d : devices()) CHECK(d.gemm_achievable_fraction.source.find("estimate") == std::string::npos);
}

TEST_CASE("vendor memory figures match docs/sources.md", "[unit]") {
  CHECK(find_device("mi250x-gcd")->hbm_capacity_bytes.value == 64e9);
  CHECK(find_device("a100-40gb")->hbm_bandwidth_Bps.value == 1.555e12);
  CHECK(find_device("a100-80gb")->hbm_bandwidth_Bps.value == 2.039e12);
  CHECK(find_device("gh200")->hbm_capacity_bytes.value == 96e9);
  CHECK(find_device("h100-sxm")->hbm_bandwidth_Bps.value == 3.35e12);
  CHECK(find_device("h200")->hbm_capacity_bytes.value == 141e9);
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
    (void)require_device("b200", "scenario.json", "gpu.device");
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
  // The ported fused kernels are the MI250X's weak spot, and its sources say so.
  const auto mi = *find_device("mi250x-gcd");
  const auto a100 = *find_device("a100-40gb");
  CHECK(mi.softmax_efficiency.value < a100.softmax_efficiency.value);
  CHECK(mi.softmax_efficiency.source.find("MI250X") != std::string::npos);
  CHECK(a100.softmax_efficiency.source.find("MI250X") == std::string::npos);
}
