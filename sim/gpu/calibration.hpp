#pragma once
// Calibration: measured kernel times override a GPU model.
//
// Why: the analytic models are only as good as their efficiencies; when someone has timed the GEMMs a
// plan actually uses (e.g. with AxoNN's tuned_matmul or rocblas-bench), those times should win, and the
// model should only fill the gaps between them.
//
// CSV format (one header line, columns in any order, '#' comment lines and blank lines allowed):
//
//   device,kernel,m,n,k,time_s
//   mi250x-gcd,gemm,8192,8192,8192,9.1e-3
//
// device: a name from devices.hpp (device_names()); kernel: "gemm" (see LIMITATIONS); m, n, k: positive
// integers; time_s: positive seconds for one kernel, launch included. A (device, kernel, m, n, k) may appear
// only once.
//
// Lookup rule of CalibratedGpu for a GEMM of flops F = 2mnk on its device:
//  1. exact (m, n, k) match: the measured time;
//  2. otherwise, if measured points lie on both sides of F: take the point with the largest flops <= F and
//     the one with the smallest flops >= F (ties in flops: the shape closest to (m, n, k), by the sum of
//     |log| ratios of m, n and k) and interpolate time linearly in flops between them; if both have flops
//     equal to F (same work, other shape), return that closest point's time. Linear in flops because time is
//     close to affine in flops between nearby shapes (fixed cost + flops / rate);
//  3. otherwise (F outside the measured range): the wrapped model's time scaled by measured/model at the
//     nearest measured point (the smallest or the largest), so the prediction stays continuous at the edge
//     of the data and keeps the model's shape dependence beyond it;
//  4. no points for this device and kernel kind, or a kernel that is not a GEMM or carries no shape: the
//     wrapped model's time, unchanged.
//
// LIMITATIONS:
//  - only GEMM rows: attention and memory-bound kernel descriptors carry no m, n, k to match against, so
//    they are always costed by the wrapped model;
//  - no operand layout column: rows are assumed to be the layout the wrapped model costs (NN);
//  - interpolation looks at flops only: two bracketing points of very different shape (one skinny, one
//    square) interpolate as if shape did not matter; measure the shapes the plan uses;
//  - no averaging of repeated measurements or outlier rejection: give one representative time per shape;
//  - no dtype column: every row is bf16.

#include "sim/gpu/gpu_model.hpp"
#include "sim/gpu/kernel.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exasim::gpu {

struct CalibrationPoint {
  std::string device;
  KernelKind kind = KernelKind::Gemm;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  double time_s = 0;
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

class CalibrationTable {
 public:
  /// Reads a calibration CSV; throws InputError(path, "line N, column C", ...) on any malformed or invalid
  /// content, including unknown device names.
  [[nodiscard]] static CalibrationTable load_csv(const std::string& path);

  /// Adds one point after validation; errors are InputError(source, field, ...), so a caller building a
  /// table from another format can point at its own file and line.
  void add(const CalibrationPoint& point, const std::string& source, const std::string& field);

  /// Points of one device and kernel kind, sorted by flops (then m, n, k); empty if none.
  [[nodiscard]] const std::vector<CalibrationPoint>& points(std::string_view device, KernelKind kind) const;
  [[nodiscard]] std::size_t size() const;

 private:
  std::map<std::pair<std::string, KernelKind>, std::vector<CalibrationPoint>> points_;
};

class CalibratedGpu final : public GpuModel {
 public:
  enum class Origin : std::uint8_t {
    Measured,      ///< rule 1
    Interpolated,  ///< rule 2
    ScaledModel,   ///< rule 3
    Model,         ///< rule 4
  };
  struct Lookup {
    double time_s = 0;
    Origin origin = Origin::Model;
  };

  /// `device` selects the table's rows; empty means the wrapped model's spec().name. An unknown device
  /// name throws InputError (source "calibration", field "device"), since it would silently match nothing.
  CalibratedGpu(std::shared_ptr<const GpuModel> base, CalibrationTable table, std::string device = {});

  [[nodiscard]] double time_s(const Kernel& kernel) const override { return lookup(kernel).time_s; }
  [[nodiscard]] const GpuSpec& spec() const override { return base_->spec(); }
  /// The time and which lookup rule produced it.
  [[nodiscard]] Lookup lookup(const Kernel& kernel) const;
  [[nodiscard]] const std::string& device() const { return device_; }

 private:
  std::shared_ptr<const GpuModel> base_;
  CalibrationTable table_;
  std::string device_;
};

[[nodiscard]] std::string_view to_string(CalibratedGpu::Origin origin);

}  // namespace exasim::gpu
