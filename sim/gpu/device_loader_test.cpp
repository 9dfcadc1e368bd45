#include "sim/gpu/device_loader.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/gpu/internal/calibration.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace exasim;
using namespace exasim::gpu;

namespace {
GpuChoice load(const char* text) {
  static nlohmann::json doc;  // JsonView keeps a reference
  doc = nlohmann::json::parse(text);
  return load_gpu_choice(JsonView(doc, "machine.json", ""));
}
std::string error_of(const char* text) {
  try {
    (void)load(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("a machine's gpu is a device name or a device with what-if overrides", "[unit]") {
  auto plain = load(R"({"gpu": "mi250x-gcd"})");
  CHECK(plain.device.name == "mi250x-gcd");
  CHECK(plain.device.hbm_capacity_bytes.value == Approx(64e9));
  CHECK(plain.calibration_csv.empty());

  auto what_if = load(R"({"gpu": {"device": "h100-sxm", "hbm_capacity_bytes": 96e9, "peak_bf16_flops": 1.2e15}})");
  CHECK(what_if.device.hbm_capacity_bytes.value == Approx(96e9));
  CHECK(what_if.device.peak_bf16_flops.value == Approx(1.2e15));
  CHECK(what_if.device.peak_bf16_flops.source.find("override in machine.json") != std::string::npos);
  // The override reaches the model: a higher peak makes a large GEMM faster.
  auto base_model = make_gpu_model(load(R"({"gpu": "h100-sxm"})"));
  auto fast_model = make_gpu_model(what_if);
  CHECK(fast_model->time_s(gemm(8192, 8192, 8192)) < base_model->time_s(gemm(8192, 8192, 8192)));
}

TEST_CASE("bad gpu entries name the field and what is allowed", "[unit]") {
  CHECK_THAT(error_of(R"({"gpu": "a200"})"), Catch::Contains("gpu") && Catch::Contains("mi250x-gcd"));
  CHECK_THAT(error_of(R"({})"), Catch::Contains("gpu: missing required field"));
  CHECK_THAT(error_of(R"({"gpu": {"device": "a100-40gb", "peak_tflops": 3}})"), Catch::Contains("peak_tflops"));
  CHECK_THAT(error_of(R"({"gpu": {"device": "a100-40gb", "memory_efficiency": 1.5}})"),
             Catch::Contains("gpu.memory_efficiency"));
  CHECK_THAT(error_of(R"({"gpu": {"device": "a100-40gb", "calibration": "/nonexistent.csv"}})"),
             Catch::Contains("gpu.calibration") && Catch::Contains("no such file"));
}

TEST_CASE("a calibration table in the gpu entry overrides the model for measured shapes", "[unit]") {
  auto csv = std::filesystem::temp_directory_path() / "exasim_device_loader_test.csv";
  std::ofstream(csv) << "device,kernel,m,n,k,time_s\nh100-sxm,gemm,4096,4096,4096,0.5\n";
  const std::string text = R"({"gpu": {"device": "h100-sxm", "calibration": ")" + csv.string() + R"("}})";
  auto model = make_gpu_model(load(text.c_str()));
  CHECK(model->time_s(gemm(4096, 4096, 4096)) == Approx(0.5));
}

TEST_CASE("a machine file overrides a memory family's efficiency and the dtype peaks", "[unit]") {
  auto choice = load(R"({"gpu": {"device": "a100-80gb", "softmax_efficiency": 0.6, "peak_fp32_gemm_flops": 39e12}})");
  CHECK(choice.device.softmax_efficiency.value == 0.6);
  CHECK(choice.device.softmax_efficiency.source == "override in machine.json (gpu.softmax_efficiency)");
  auto model = make_gpu_model(choice);
  const auto launch = choice.device.kernel_launch_s.value;
  CHECK(model->time_s(memory_kernel(MemoryFamily::Softmax, 1e9)) == Approx(1e9 / (2.039e12 * 0.6) + launch));
  // Only the softmax family changed.
  auto plain = make_gpu_model(load(R"({"gpu": "a100-80gb"})"));
  CHECK(model->time_s(memory_kernel(MemoryFamily::Norm, 1e9)) == plain->time_s(memory_kernel(MemoryFamily::Norm, 1e9)));
  // Twice the fp32 GEMM peak, half the fp32 GEMM compute time.
  const auto fp32 = gemm(8192, 8192, 8192, GemmLayout::NN, DType::Fp32);
  CHECK(model->time_s(fp32) - launch == Approx((plain->time_s(fp32) - launch) / 2));
  // Every new figure is accepted (the key check and the override table agree) and lands in the device.
  for (const char* key :
       {"peak_fp16_flops", "peak_fp32_gemm_flops", "peak_fp8_flops", "norm_efficiency", "softmax_efficiency",
        "dropout_efficiency", "activation_efficiency", "optimizer_efficiency", "gemm_fp8_achievable_fraction"}) {
    INFO(key);
    // A peak is at least 1 GFLOP/s, an efficiency at most 1: 0.25 TFLOP/s or 0.25.
    const double value = std::string(key).starts_with("peak") ? 0.25e12 : 0.25;
    const std::string text =
        std::string(R"({"gpu": {"device": "h200", ")") + key + R"(": )" + std::to_string(value) + "}}";
    auto c = load(text.c_str());
    int overridden = 0;
    for (const Figure* f :
         {&c.device.peak_fp16_flops, &c.device.peak_fp32_gemm_flops, &c.device.peak_fp8_flops,
          &c.device.norm_efficiency, &c.device.softmax_efficiency, &c.device.dropout_efficiency,
          &c.device.activation_efficiency, &c.device.optimizer_efficiency, &c.device.gemm_fp8_achievable_fraction})
      overridden += f->value == value && f->source.find(key) != std::string::npos;
    CHECK(overridden == 1);
  }
  CHECK_THAT(error_of(R"({"gpu": {"device": "a100-40gb", "norm_efficiency": 0}})"),
             Catch::Contains("gpu.norm_efficiency"));
  CHECK_THAT(error_of(R"({"gpu": {"device": "a100-40gb", "softmax_efficiency": 1.2}})"),
             Catch::Contains("gpu.softmax_efficiency"));
  // An FP8 peak on a device without FP8 (a what-if) needs its fraction too.
  CHECK_THAT(error_of(R"({"gpu": {"device": "a100-80gb", "peak_fp8_flops": 624e12}})"),
             Catch::Contains("gpu.peak_fp8_flops") && Catch::Contains("give gemm_fp8_achievable_fraction too"));
  auto what_if =
      load(R"({"gpu": {"device": "a100-80gb", "peak_fp8_flops": 624e12, "gemm_fp8_achievable_fraction": 0.8}})");
  CHECK(what_if.device.has_fp8());
  CHECK(what_if.device.achievable_gemm_flops(DType::Fp8) == Approx(624e12 * 0.8));
}

TEST_CASE("a calibration table's efficiency rows reach the machine's model", "[unit]") {
  auto csv = std::filesystem::temp_directory_path() / "exasim_device_loader_efficiency_test.csv";
  std::ofstream(csv) << "device,kernel,m,n,k,time_s,efficiency\nh100-sxm,norm,,,,,0.5\n";
  const std::string text = R"({"gpu": {"device": "h100-sxm", "calibration": ")" + csv.string() + R"("}})";
  auto model = make_gpu_model(load(text.c_str()));
  CHECK(model->time_s(memory_kernel(MemoryFamily::Norm, 1e9)) == Approx(1e9 / (3.35e12 * 0.5) + 5e-6));
}
