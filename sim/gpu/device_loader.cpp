#include "sim/gpu/device_loader.hpp"

#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/gpu/internal/calibration.hpp"
#include "sim/gpu/shape_aware_gpu.hpp"

#include <filesystem>

namespace exasim::gpu {

namespace {

struct Overridable {
  const char* key;
  Figure DeviceSpec::*figure;
  double max;
};

// Upper bounds only catch unit slips (TFLOP/s typed as flop/s is caught by the lower bound of 0).
constexpr Overridable kOverridableFigures[] = {
    {"peak_bf16_flops", &DeviceSpec::peak_bf16_flops, 1e17},
    {"peak_fp16_flops", &DeviceSpec::peak_fp16_flops, 1e17},
    {"peak_fp32_flops", &DeviceSpec::peak_fp32_flops, 1e17},
    {"peak_fp32_gemm_flops", &DeviceSpec::peak_fp32_gemm_flops, 1e17},
    {"hbm_bandwidth_Bps", &DeviceSpec::hbm_bandwidth_Bps, 1e15},
    {"hbm_capacity_bytes", &DeviceSpec::hbm_capacity_bytes, 1e14},
    {"compute_units", &DeviceSpec::compute_units, 1e5},
    {"gemm_achievable_fraction", &DeviceSpec::gemm_achievable_fraction, 1},
    {"attention_efficiency", &DeviceSpec::attention_efficiency, 1},
    {"memory_efficiency", &DeviceSpec::memory_efficiency, 1},
    {"norm_efficiency", &DeviceSpec::norm_efficiency, 1},
    {"softmax_efficiency", &DeviceSpec::softmax_efficiency, 1},
    {"dropout_efficiency", &DeviceSpec::dropout_efficiency, 1},
    {"activation_efficiency", &DeviceSpec::activation_efficiency, 1},
    {"optimizer_efficiency", &DeviceSpec::optimizer_efficiency, 1},
    {"kernel_launch_s", &DeviceSpec::kernel_launch_s, 1},
    {"layout_nt_factor", &DeviceSpec::layout_nt_factor, 100},
    {"layout_tn_factor", &DeviceSpec::layout_tn_factor, 100},
};

/// A relative path is looked for beside the file the gpu object came from (the machine file), then in
/// the current directory, then in the data dir.
std::string resolve_calibration(const JsonView& v, const std::string& text) {
  auto candidates = input_file_candidates(text, v.source());
  if (std::filesystem::path(text).is_relative()) candidates.push_back(data_dir() / text);
  const auto p = first_file(candidates);
  if (p.empty()) v.fail("calibration", "no such file '" + text + "' (tried " + list_candidates(candidates) + ")");
  return p.string();
}

}  // namespace

GpuChoice load_gpu_choice(const JsonView& parent, const std::string& key) {
  if (!parent.has(key))
    parent.fail(
        key, "missing required field: a device name (" + [] {
          std::string names;
          for (const auto& n : device_names()) names += (names.empty() ? "" : ", ") + n;
          return names;
        }() + ") or an object {\"device\": ...}");
  GpuChoice choice;
  if (parent.json().at(key).is_string()) {
    choice.device = require_device(parent.string(key), parent.source(), parent.field(key));
    return choice;
  }
  auto v = parent.object(key);
  v.check_keys({"device",
                "calibration",
                "sources",
                "peak_bf16_flops",
                "peak_fp16_flops",
                "peak_fp32_flops",
                "peak_fp32_gemm_flops",
                "hbm_bandwidth_Bps",
                "hbm_capacity_bytes",
                "compute_units",
                "gemm_achievable_fraction",
                "attention_efficiency",
                "memory_efficiency",
                "norm_efficiency",
                "softmax_efficiency",
                "dropout_efficiency",
                "activation_efficiency",
                "optimizer_efficiency",
                "kernel_launch_s",
                "layout_nt_factor",
                "layout_tn_factor"});
  choice.device = require_device(v.string("device"), v.source(), v.field("device"));
  for (const auto& o : kOverridableFigures) {
    if (!v.has(o.key)) continue;
    (choice.device.*o.figure) = {v.number(o.key, 0, o.max), "override in " + v.source() + " (" + v.field(o.key) + ")"};
  }
  if (v.has("calibration")) {
    choice.calibration_csv = resolve_calibration(v, v.string("calibration"));
    choice.calibration = std::make_shared<const CalibrationTable>(CalibrationTable::load_csv(choice.calibration_csv));
  }
  return choice;
}

std::unique_ptr<GpuModel> make_gpu_model(const GpuChoice& choice) {
  if (!choice.calibration) return std::make_unique<ShapeAwareGpu>(choice.device);
  return std::make_unique<CalibratedGpu>(choice.device, *choice.calibration);
}

}  // namespace exasim::gpu
