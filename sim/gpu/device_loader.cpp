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
  double min;  ///< inclusive; 0 means "> 0"
  double max;
};

// Lower bounds refuse physically absurd figures (below 1 GFLOP/s, 1 kB/s, 1 MB, an efficiency below
// 0.1 %) that would simulate kernels lasting years as if meaningful; upper bounds catch unit slips.
constexpr double kMinFlops = 1e9;
constexpr double kMinBandwidth_Bps = 1e3;
constexpr double kMinFraction = 1e-3;
constexpr Overridable kOverridableFigures[] = {
    {"peak_bf16_flops", &DeviceSpec::peak_bf16_flops, kMinFlops, 1e17},
    {"peak_fp16_flops", &DeviceSpec::peak_fp16_flops, kMinFlops, 1e17},
    {"peak_fp32_flops", &DeviceSpec::peak_fp32_flops, kMinFlops, 1e17},
    {"peak_fp32_gemm_flops", &DeviceSpec::peak_fp32_gemm_flops, kMinFlops, 1e17},
    {"peak_fp8_flops", &DeviceSpec::peak_fp8_flops, kMinFlops, 1e17},
    {"hbm_bandwidth_Bps", &DeviceSpec::hbm_bandwidth_Bps, kMinBandwidth_Bps, 1e15},
    {"hbm_capacity_bytes", &DeviceSpec::hbm_capacity_bytes, 1e6, 1e14},
    {"compute_units", &DeviceSpec::compute_units, 1, 1e5},  // an integer: read with integer() below
    {"gemm_achievable_fraction", &DeviceSpec::gemm_achievable_fraction, kMinFraction, 1},
    {"gemm_fp8_achievable_fraction", &DeviceSpec::gemm_fp8_achievable_fraction, kMinFraction, 1},
    {"attention_efficiency", &DeviceSpec::attention_efficiency, kMinFraction, 1},
    {"memory_efficiency", &DeviceSpec::memory_efficiency, kMinFraction, 1},
    {"norm_efficiency", &DeviceSpec::norm_efficiency, kMinFraction, 1},
    {"softmax_efficiency", &DeviceSpec::softmax_efficiency, kMinFraction, 1},
    {"dropout_efficiency", &DeviceSpec::dropout_efficiency, kMinFraction, 1},
    {"activation_efficiency", &DeviceSpec::activation_efficiency, kMinFraction, 1},
    {"optimizer_efficiency", &DeviceSpec::optimizer_efficiency, kMinFraction, 1},
    {"kernel_launch_s", &DeviceSpec::kernel_launch_s, 0, 1},
    {"comm_overlap_slowdown", &DeviceSpec::comm_overlap_slowdown, 0, 10},
    {"layout_nt_factor", &DeviceSpec::layout_nt_factor, 0.01, 100},
    {"layout_tn_factor", &DeviceSpec::layout_tn_factor, 0.01, 100},
    {"busy_power_w", &DeviceSpec::busy_power_w, 1, 1e5},
    {"idle_power_w", &DeviceSpec::idle_power_w, 1e-3, 1e5},
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
                "peak_fp8_flops",
                "hbm_bandwidth_Bps",
                "hbm_capacity_bytes",
                "compute_units",
                "gemm_achievable_fraction",
                "gemm_fp8_achievable_fraction",
                "attention_efficiency",
                "memory_efficiency",
                "norm_efficiency",
                "softmax_efficiency",
                "dropout_efficiency",
                "activation_efficiency",
                "optimizer_efficiency",
                "kernel_launch_s",
                "comm_overlap_slowdown",
                "layout_nt_factor",
                "layout_tn_factor",
                "busy_power_w",
                "idle_power_w"});
  choice.device = require_device(v.string("device"), v.source(), v.field("device"));
  for (const auto& o : kOverridableFigures) {
    if (!v.has(o.key)) continue;
    // compute_units divides GEMM tiles into waves: a fraction would truncate to 0 SMs.
    const double value =
        o.figure == &DeviceSpec::compute_units
            ? static_cast<double>(v.integer(o.key, static_cast<std::int64_t>(o.min), static_cast<std::int64_t>(o.max)))
            : v.number(o.key, o.min, o.max, /*min_exclusive=*/o.min == 0);
    (choice.device.*o.figure) = {value, "override in " + v.source() + " (" + v.field(o.key) + ")"};
  }
  // An FP8 peak given to a device without FP8 (a what-if) needs the fraction its GEMMs reach.
  if (choice.device.has_fp8() && !(choice.device.gemm_fp8_achievable_fraction.value > 0))
    v.fail("peak_fp8_flops", "device '" + choice.device.name +
                                 "' has no FP8 GEMM fraction to go with an FP8 peak: give gemm_fp8_achievable_fraction "
                                 "too");
  if (v.has("calibration")) {
    choice.calibration_csv = resolve_calibration(v, v.string("calibration"));
    choice.calibration = std::make_shared<const CalibrationTable>(CalibrationTable::load_csv(choice.calibration_csv));
    // Rows that would change nothing are refused rather than ignored: the user believes they count.
    const auto& table = *choice.calibration;
    if (table.size() > 0 && !table.has_device(choice.device.name))
      throw InputError(
          choice.calibration_csv, "device",
          "no row is for this scenario's GPU, " + choice.device.name + ": the file calibrates another device");
    if (!table.collectives().empty())
      throw InputError(choice.calibration_csv, table.collectives().front().row,
                       "the " + table.collectives().front().kernel +
                           " row: collective rows are not used by any network model yet; remove them or comment "
                           "them out with #");
  }
  return choice;
}

std::unique_ptr<GpuModel> make_gpu_model(const GpuChoice& choice) {
  if (!choice.calibration) return std::make_unique<ShapeAwareGpu>(choice.device);
  return std::make_unique<CalibratedGpu>(choice.device, *choice.calibration);
}

}  // namespace exasim::gpu
