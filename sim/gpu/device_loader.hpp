#pragma once
// The "gpu" entry of a machine file: which built-in device (devices.hpp), with optional what-if
// overrides and an optional calibration table of measured kernel times.
//
//   "gpu": "mi250x-gcd"
//   "gpu": {"device": "h100-sxm", "hbm_capacity_bytes": 80e9, "calibration": "configs/calibration/h100.csv"}
//   "gpu": {"device": "a100-80gb", "softmax_efficiency": 0.6}
//
// An override replaces the device's figure and records the machine file as its source, so reports can
// tell a vendor number from a user's what-if. A relative calibration path is looked up from the current
// directory first, then from exasim's data directory (where configs/calibration/ ships).
//
// LIMITATIONS: only the figures listed in kOverridableFigures can be overridden; a device that is not
// in the built-in table must be added to devices.cpp (there is no fully custom device object).

#include "sim/gpu/devices.hpp"
#include "sim/gpu/gpu_model.hpp"

#include <memory>
#include <string>

namespace exasim {
class JsonView;
}

namespace exasim::gpu {

class CalibrationTable;

struct GpuChoice {
  DeviceSpec device;
  std::string calibration_csv;                          ///< resolved path; empty: none
  std::shared_ptr<const CalibrationTable> calibration;  ///< its rows, read once when the machine loads
};

/// Reads `parent.gpu` (a device name or an object as above); InputError naming the field on any problem.
[[nodiscard]] GpuChoice load_gpu_choice(const JsonView& parent, const std::string& key = "gpu");

/// The model simulate and emulate cost kernels with: the shape-aware model of the device, with the
/// calibration table's efficiency rows applied and its GEMM rows on top when one is given.
[[nodiscard]] std::unique_ptr<GpuModel> make_gpu_model(const GpuChoice& choice);

}  // namespace exasim::gpu
