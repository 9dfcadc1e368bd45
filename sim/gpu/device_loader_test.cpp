#include "sim/gpu/device_loader.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/gpu/calibration.hpp"

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
