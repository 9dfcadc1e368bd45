#pragma once
// Calibration: measured kernel times and efficiencies override a GPU model.
//
// Why: the analytic models are only as good as their efficiencies; when someone has timed the GEMMs a
// plan actually uses (e.g. with AxoNN's tuned_matmul or rocblas-bench), those times should win, and the
// model should only fill the gaps between them. Likewise a measured bandwidth efficiency of a kernel
// family (a LayerNorm or softmax benchmark) should replace the estimate in devices.cpp.
//
// CSV format (one header line, columns in any order, '#' comment lines and blank lines allowed). The
// columns device, kernel, m, n, k and time_s are required; efficiency, batch, dtype, layout, bytes,
// group_size and bus_bandwidth_Bps are optional (`exasim calibrate --from-trace` writes them all):
//
//   device,kernel,m,n,k,time_s,batch,dtype,efficiency
//   mi250x-gcd,gemm,8192,8192,8192,9.1e-3,,,
//   h100-sxm,gemm,2048,2048,128,2.1e-4,64,bf16,
//   h100-sxm,softmax,,,,,,,0.62
//   h100-sxm,attention,,,,,,,0.45
//
// device: a name from devices.hpp (device_names()). Two kinds of rows:
//  - GEMM rows (kernel "gemm"): m, n, k positive integers; time_s positive seconds for one kernel, launch
//    included; batch a positive integer (empty: 1) and dtype bf16, fp16, fp32 or fp8 (empty: bf16; fp8
//    only on a device with FP8); layout NN, NT or TN (kernel.hpp's letters, those of the BLAS call; empty:
//    any); efficiency empty. A (device, batch, dtype, m, n, k, layout) may appear only once.
//  - efficiency rows (kernel "attention" or a memory family: elementwise, norm, softmax, dropout,
//    activation, optimizer; kernel.hpp): efficiency in (0, 1], the sustained fraction of HBM bandwidth
//    of that family's kernels (for attention: of the dtype's tensor peak); m, n, k, time_s, batch and dtype
//    empty. It replaces the device's figure of that name (devices.hpp: memory_efficiency for elementwise,
//    norm_efficiency, ..., attention_efficiency) with source "calibration FILE line N". A (device, kernel)
//    may appear only once. (Elementwise's figure also prices GEMM and attention bytes, as in the model.)
//  - collective rows (kernel all_reduce, all_gather, reduce_scatter, broadcast, send_recv or all_to_all):
//    bytes the buffer size S (traces/SCHEMA.md) and time_s the measured time of one call, both positive;
//    bus_bandwidth_Bps positive (NCCL's bus bandwidth: S / time_s times 2(n-1)/n for an all-reduce,
//    (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 otherwise); group_size the ranks (empty:
//    unknown); the other columns empty. A (device, kernel, bytes, group_size) may appear only once.
//
// Lookup rule of CalibratedGpu for a GEMM of flops F = batch x 2mnk on its device, among the rows of the
// kernel's own batch and dtype (matched exactly):
//  1. exact (m, n, k) match: the measured time;
//  2. otherwise, if measured points lie on both sides of F: take the point with the largest flops <= F and
//     the one with the smallest flops >= F (ties in flops: the shape closest to (m, n, k), by the sum of
//     |log| ratios of m, n and k) and interpolate time linearly in flops between them; if both have flops
//     equal to F (same work, other shape), return that closest point's time. Linear in flops because time is
//     close to affine in flops between nearby shapes (fixed cost + flops / rate);
//  3. otherwise (F outside the measured range): the wrapped model's time scaled by measured/model at the
//     nearest measured point (the smallest or the largest), so the prediction stays continuous at the edge
//     of the data and keeps the model's shape dependence beyond it;
//  4. no points for this device, batch and dtype, or a kernel that is not a GEMM or carries no shape: the
//     wrapped model's time, unchanged (with the efficiency rows applied, when built from a DeviceSpec).
//
// LIMITATIONS:
//  - attention and memory-bound kernels are calibrated by one efficiency per family, not by measured times
//    (their descriptors carry no shape to match); the efficiency applies to every size of the family;
//  - layout only picks among rows of the exact shape (rule 1: the row of the kernel's layout, else a row
//    without one, else any); interpolation ignores it;
//  - collective rows are read, checked and kept (collectives()), but no network model uses them yet: a
//    scenario whose calibration file has one is refused (gpu::load_gpu_choice names the row) rather than
//    run as if the row counted;
//  - batch and dtype are matched exactly: a batch-32 row says nothing about a batch-64 GEMM, whose time
//    then comes from the model;
//  - interpolation looks at flops only: two bracketing points of very different shape (one skinny, one
//    square) interpolate as if shape did not matter; measure the shapes the plan uses;
//  - no averaging of repeated measurements or outlier rejection: give one representative time per shape.

#include "sim/gpu/devices.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "sim/gpu/kernel.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace exasim::gpu {

/// One measured GEMM (a GEMM row).
struct CalibrationPoint {
  std::string device;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  double time_s = 0;
  std::int64_t batch = 1;
  DType dtype = DType::Bf16;
  std::optional<GemmLayout> layout;  ///< empty: measured in an unknown layout, matches any
  [[nodiscard]] double flops() const {
    return static_cast<double>(batch) * 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

/// One efficiency row: `kernel` is "attention" or a memory family name (kernel.hpp).
struct CalibrationEfficiency {
  std::string device;
  std::string kernel;
  double efficiency = 0;
};

/// One measured collective size (a collective row).
struct CalibrationCollective {
  std::string device;
  std::string kernel;  ///< all_reduce, all_gather, reduce_scatter, broadcast, send_recv, all_to_all
  double bytes = 0;
  int group_size = 0;  ///< 0: unknown
  double time_s = 0;
  double bus_bandwidth_Bps = 0;
  std::string row;  ///< where it was read ("line 12"), for messages
};

class CalibrationTable {
 public:
  /// Reads a calibration CSV; throws InputError(path, "line N, column C", ...) on any malformed or invalid
  /// content, including unknown device names.
  [[nodiscard]] static CalibrationTable load_csv(const std::string& path);

  /// Adds one point after validation; errors are InputError(source, field, ...), so a caller building a
  /// table from another format can point at its own file and line.
  void add(const CalibrationPoint& point, const std::string& source, const std::string& field);
  /// Adds one efficiency after validation, errors as add(); the figure's source is "calibration SOURCE
  /// FIELD" (e.g. "calibration h100.csv line 4").
  void add(const CalibrationEfficiency& row, const std::string& source, const std::string& field);

  /// Adds one collective row after validation, errors as add().
  void add(const CalibrationCollective& row, const std::string& source, const std::string& field);
  /// Collective rows, in file order.
  [[nodiscard]] const std::vector<CalibrationCollective>& collectives() const { return collectives_; }

  /// GEMM points of one device, batch and dtype, sorted by flops (then m, n, k); empty if none.
  [[nodiscard]] const std::vector<CalibrationPoint>& points(std::string_view device, std::int64_t batch = 1,
                                                            DType dtype = DType::Bf16) const;
  /// `device` with the figures of its efficiency rows replaced (the other devices' rows ignored).
  [[nodiscard]] DeviceSpec apply_efficiencies(DeviceSpec device) const;
  [[nodiscard]] bool has_efficiencies(std::string_view device) const;
  /// Whether any row (GEMM, efficiency or collective) is for `device`.
  [[nodiscard]] bool has_device(std::string_view device) const;
  /// GEMM points plus efficiency and collective rows.
  [[nodiscard]] std::size_t size() const;

 private:
  std::map<std::tuple<std::string, std::int64_t, DType>, std::vector<CalibrationPoint>> points_;
  std::map<std::pair<std::string, std::string>, Figure> efficiencies_;  ///< (device, kernel) -> figure
  std::vector<CalibrationCollective> collectives_;
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

  /// The shape-aware model of `device` with the table's efficiency rows for it applied, and its GEMM rows
  /// on top: what make_gpu_model builds for a machine file's calibration CSV.
  CalibratedGpu(const DeviceSpec& device, CalibrationTable table);
  /// `base` with the table's GEMM rows on top. `device` selects the table's rows; empty means the wrapped
  /// model's spec().name. An unknown device name throws InputError (source "calibration", field "device"),
  /// since it would silently match nothing. Efficiency rows for the device are std::invalid_argument (a
  /// caller bug): an opaque model cannot take them, and dropping them silently would be wrong.
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
