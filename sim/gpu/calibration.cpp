#include "sim/gpu/internal/calibration.hpp"

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/gpu/devices.hpp"
#include "sim/gpu/shape_aware_gpu.hpp"

#include "sim/core/fccp_csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace exasim::gpu {

namespace {

constexpr const char* kHeader =
    "device,kernel,m,n,k,time_s (optional: efficiency, batch, dtype, layout, bytes, group_size, bus_bandwidth_Bps)";
constexpr const char* kKernels =
    "gemm, attention, elementwise, norm, softmax, dropout, activation, optimizer, all_reduce, all_gather, "
    "reduce_scatter, broadcast, send_recv or all_to_all";

bool is_collective(std::string_view kernel) {
  return kernel == "all_reduce" || kernel == "all_gather" || kernel == "reduce_scatter" || kernel == "broadcast" ||
         kernel == "send_recv" || kernel == "all_to_all";
}

std::string at(unsigned line, const std::string& column) {
  std::string where = "line " + std::to_string(line);
  if (!column.empty()) where += ", column " + column;
  return where;
}

// A column of the caller's field ("line 3" -> "line 3, column m"), or the bare column when there is none.
std::string in_column(const std::string& field, const char* column) {
  return field.empty() ? std::string(column) : field + ", column " + column;
}

// Distance between GEMM shapes in log space: scale-free, so 64 vs 128 is as far as 4096 vs 8192.
double shape_distance(const CalibrationPoint& p, const Kernel& kernel) {
  auto d = [](std::int64_t a, std::int64_t b) {
    return std::abs(std::log(static_cast<double>(a)) - std::log(static_cast<double>(b)));
  };
  return d(p.m, kernel.m) + d(p.n, kernel.n) + d(p.k, kernel.k);
}

// Among the points whose flops equal `flops`, the one closest in shape to `kernel`.
const CalibrationPoint& closest_with_flops(const std::vector<CalibrationPoint>& pts, double flops,
                                           const Kernel& kernel) {
  const CalibrationPoint* best = nullptr;
  for (const auto& p : pts) {
    if (p.flops() != flops) continue;
    if (best == nullptr || shape_distance(p, kernel) < shape_distance(*best, kernel)) best = &p;
  }
  if (best == nullptr) throw std::logic_error("closest_with_flops: no point with the requested flops");
  return *best;
}

// libfccp's float parser accumulates powers of ten and can be off in the last bits; measured times
// should round-trip exactly, so numbers are parsed with from_chars.
double parse_number(const std::string& text, const std::string& path, unsigned line, const char* column) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw InputError(path, at(line, column), "not a number: '" + text + "'");
  return value;
}

std::int64_t parse_integer(const std::string& text, const std::string& path, unsigned line, const char* column) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw InputError(path, at(line, column), "must be a positive integer (got '" + text + "')");
  return value;
}

// The DeviceSpec figure an efficiency row replaces: attention's, or a memory family's; nullopt when the
// kernel name is neither.
std::optional<Figure DeviceSpec::*> efficiency_target(std::string_view kernel) {
  if (kernel == "attention") return &DeviceSpec::attention_efficiency;
  if (auto family = parse_memory_family(kernel)) return DeviceSpec::efficiency_figure(*family);
  return std::nullopt;
}

// One CSV row, every cell as text (a column absent from the header reads as empty).
struct Row {
  std::string device, kernel, m, n, k, time_s, efficiency, batch, dtype, layout, bytes, group_size, bus_bandwidth_Bps;
};

// Cells that belong to another kind of row must be empty on this one.
void require_empty(const Row& r, std::initializer_list<const char*> columns, const std::string& path, unsigned line,
                   const std::string& why) {
  for (const char* column : columns) {
    const std::string* cell = nullptr;
    const std::string_view c = column;
    if (c == "m") cell = &r.m;
    if (c == "n") cell = &r.n;
    if (c == "k") cell = &r.k;
    if (c == "time_s") cell = &r.time_s;
    if (c == "batch") cell = &r.batch;
    if (c == "dtype") cell = &r.dtype;
    if (c == "efficiency") cell = &r.efficiency;
    if (c == "layout") cell = &r.layout;
    if (c == "bytes") cell = &r.bytes;
    if (c == "group_size") cell = &r.group_size;
    if (c == "bus_bandwidth_Bps") cell = &r.bus_bandwidth_Bps;
    if (cell != nullptr && !cell->empty()) throw InputError(path, at(line, column), "must be empty on " + why);
  }
}

CalibrationPoint gemm_point(const Row& r, const std::string& path, unsigned line) {
  if (!r.efficiency.empty())
    throw InputError(path, at(line, "efficiency"),
                     "a gemm row gives a measured time_s, not an efficiency (efficiency rows are for attention and "
                     "the memory families)");
  CalibrationPoint p;
  p.device = r.device;
  p.m = parse_integer(r.m, path, line, "m");
  p.n = parse_integer(r.n, path, line, "n");
  p.k = parse_integer(r.k, path, line, "k");
  p.time_s = parse_number(r.time_s, path, line, "time_s");
  if (!r.batch.empty()) p.batch = parse_integer(r.batch, path, line, "batch");
  if (!r.dtype.empty()) {
    auto dtype = parse_dtype(r.dtype);
    if (!dtype)
      throw InputError(path, at(line, "dtype"), "unknown dtype '" + r.dtype + "' (expected bf16, fp16, fp32 or fp8)");
    p.dtype = *dtype;
  }
  if (!r.layout.empty()) {
    if (r.layout == "NN")
      p.layout = GemmLayout::NN;
    else if (r.layout == "NT")
      p.layout = GemmLayout::NT;
    else if (r.layout == "TN")
      p.layout = GemmLayout::TN;
    else
      throw InputError(path, at(line, "layout"), "unknown layout '" + r.layout + "' (expected NN, NT or TN)");
  }
  require_empty(r, {"bytes", "group_size", "bus_bandwidth_Bps"}, path, line,
                "a gemm row (bytes, group_size and bus_bandwidth_Bps are for collective rows)");
  return p;
}

CalibrationCollective collective_row(const Row& r, const std::string& path, unsigned line) {
  require_empty(r, {"m", "n", "k", "batch", "dtype", "efficiency", "layout"}, path, line,
                "a collective row (it gives bytes, time_s, group_size and bus_bandwidth_Bps)");
  CalibrationCollective c;
  c.device = r.device;
  c.kernel = r.kernel;
  c.bytes = parse_number(r.bytes, path, line, "bytes");
  c.time_s = parse_number(r.time_s, path, line, "time_s");
  c.bus_bandwidth_Bps = parse_number(r.bus_bandwidth_Bps, path, line, "bus_bandwidth_Bps");
  if (!r.group_size.empty()) c.group_size = static_cast<int>(parse_integer(r.group_size, path, line, "group_size"));
  return c;
}

CalibrationEfficiency efficiency_row(const Row& r, const std::string& path, unsigned line) {
  if (r.efficiency.empty())
    throw InputError(path, at(line, "efficiency"),
                     "kernel '" + r.kernel + "' takes an efficiency (its sustained fraction of " +
                         (r.kernel == "attention" ? "the tensor peak" : "HBM bandwidth") +
                         ", in (0, 1]); measured times are taken for gemm rows only");
  // A row is either a GEMM time or a family efficiency: GEMM cells on an efficiency row are a mistake.
  const std::pair<const char*, const std::string*> gemm_cells[] = {
      {"m", &r.m}, {"n", &r.n}, {"k", &r.k}, {"time_s", &r.time_s}, {"batch", &r.batch}, {"dtype", &r.dtype}};
  for (const auto& [column, cell] : gemm_cells)
    if (!cell->empty())
      throw InputError(path, at(line, column),
                       "must be empty on an efficiency row (a row gives either a gemm time or a " + r.kernel +
                           " efficiency, not both)");
  require_empty(r, {"layout", "bytes", "group_size", "bus_bandwidth_Bps"}, path, line, "an efficiency row");
  return {r.device, r.kernel, parse_number(r.efficiency, path, line, "efficiency")};
}

}  // namespace

std::string_view to_string(CalibratedGpu::Origin origin) {
  switch (origin) {
    case CalibratedGpu::Origin::Measured: return "measured";
    case CalibratedGpu::Origin::Interpolated: return "interpolated";
    case CalibratedGpu::Origin::ScaledModel: return "scaled-model";
    case CalibratedGpu::Origin::Model: return "model";
  }
  return "?";
}

void CalibrationTable::add(const CalibrationPoint& p, const std::string& source, const std::string& field) {
  auto where = [&](const char* column) { return in_column(field, column); };
  const DeviceSpec& device = require_device(p.device, source, where("device"));
  if (p.dtype == DType::Fp8 && !device.has_fp8())
    throw InputError(
        source, where("dtype"),
        "device '" + p.device + "' has no FP8 tensor cores (devices with FP8: " + fp8_device_names() + ")");
  if (p.m <= 0) throw InputError(source, where("m"), "must be a positive integer");
  if (p.n <= 0) throw InputError(source, where("n"), "must be a positive integer");
  if (p.k <= 0) throw InputError(source, where("k"), "must be a positive integer");
  if (!(p.time_s > 0) || !std::isfinite(p.time_s))
    throw InputError(source, where("time_s"), "must be a positive number of seconds");
  if (p.batch <= 0) throw InputError(source, where("batch"), "must be a positive integer");
  // A time in the wrong unit (1e-300 s) would make this GEMM run at 1e294 FLOP/s.
  const double peak = std::max({device.peak_bf16_flops.value, device.peak_fp16_flops.value,
                                device.peak_fp32_gemm_flops.value, device.peak_fp8_flops.value});
  if (p.flops() / p.time_s > 10 * peak)
    throw InputError(source, where("time_s"),
                     "gives " + std::to_string(p.flops() / p.time_s) + " FLOP/s, more than 10x the peak of " +
                         p.device + " (" + std::to_string(peak) + "): a time in the wrong unit?");

  auto& pts = points_[{p.device, p.batch, p.dtype}];
  // A point without a layout sorts first among those of its shape.
  auto key = [](const CalibrationPoint& q) {
    return std::make_tuple(q.flops(), q.m, q.n, q.k, q.layout ? static_cast<int>(*q.layout) : -1);
  };
  auto pos = std::lower_bound(pts.begin(), pts.end(), p,
                              [&](const CalibrationPoint& a, const CalibrationPoint& b) { return key(a) < key(b); });
  if (pos != pts.end() && key(*pos) == key(p))
    throw InputError(source, field.empty() ? std::string("m,n,k") : field,
                     "duplicate row for " + p.device + " gemm " +
                         (p.batch == 1 ? "" : std::to_string(p.batch) + " x ") + std::to_string(p.m) + "x" +
                         std::to_string(p.n) + "x" + std::to_string(p.k) + " " + std::string(to_string(p.dtype)) +
                         (p.layout ? " " + std::string(to_string(*p.layout)) : ""));
  pts.insert(pos, p);
}

void CalibrationTable::add(const CalibrationEfficiency& row, const std::string& source, const std::string& field) {
  auto where = [&](const char* column) { return in_column(field, column); };
  (void)require_device(row.device, source, where("device"));
  if (!efficiency_target(row.kernel))
    throw InputError(source, where("kernel"), "unknown kernel '" + row.kernel + "' (expected " + kKernels + ")");
  if (!(row.efficiency > 0 && row.efficiency <= 1))
    throw InputError(source, where("efficiency"), "must be a fraction in (0, 1]");
  Figure figure{row.efficiency, "calibration " + source + (field.empty() ? "" : " " + field)};
  auto [it, inserted] = efficiencies_.try_emplace({row.device, row.kernel}, figure);
  if (!inserted)
    throw InputError(
        source, field.empty() ? std::string("kernel") : field,
        "duplicate efficiency row for " + row.device + " " + row.kernel + " (first: " + it->second.source + ")");
}

void CalibrationTable::add(const CalibrationCollective& row, const std::string& source, const std::string& field) {
  auto where = [&](const char* column) { return in_column(field, column); };
  (void)require_device(row.device, source, where("device"));
  if (!is_collective(row.kernel))
    throw InputError(source, where("kernel"), "unknown collective '" + row.kernel + "' (expected " + kKernels + ")");
  if (!(row.bytes > 0) || !std::isfinite(row.bytes))
    throw InputError(source, where("bytes"), "must be a positive number of bytes");
  if (!(row.time_s > 0) || !std::isfinite(row.time_s))
    throw InputError(source, where("time_s"), "must be a positive number of seconds");
  if (!(row.bus_bandwidth_Bps > 0) || !std::isfinite(row.bus_bandwidth_Bps))
    throw InputError(source, where("bus_bandwidth_Bps"), "must be a positive number of bytes per second");
  if (row.group_size < 0) throw InputError(source, where("group_size"), "must be a positive integer");
  for (const auto& c : collectives_)
    if (c.device == row.device && c.kernel == row.kernel && c.bytes == row.bytes && c.group_size == row.group_size)
      throw InputError(
          source, field.empty() ? std::string("bytes") : field,
          "duplicate row for " + row.device + " " + row.kernel + " of " + std::to_string(row.bytes) + " bytes");
  collectives_.push_back(row);
  collectives_.back().row = field;
}

bool CalibrationTable::has_device(std::string_view device) const {
  for (const auto& [key, pts] : points_)
    if (std::get<0>(key) == device) return true;
  for (const auto& [key, figure] : efficiencies_)
    if (key.first == device) return true;
  return std::any_of(collectives_.begin(), collectives_.end(),
                     [&](const CalibrationCollective& c) { return c.device == device; });
}

const std::vector<CalibrationPoint>& CalibrationTable::points(std::string_view device, std::int64_t batch,
                                                              DType dtype) const {
  static const std::vector<CalibrationPoint> none;
  auto it = points_.find({std::string(device), batch, dtype});
  return it == points_.end() ? none : it->second;
}

DeviceSpec CalibrationTable::apply_efficiencies(DeviceSpec device) const {
  for (const auto& [key, figure] : efficiencies_)
    if (key.first == device.name) device.*(*efficiency_target(key.second)) = figure;
  return device;
}

bool CalibrationTable::has_efficiencies(std::string_view device) const {
  return std::any_of(efficiencies_.begin(), efficiencies_.end(),
                     [&](const auto& entry) { return entry.first.first == device; });
}

std::size_t CalibrationTable::size() const {
  std::size_t n = efficiencies_.size() + collectives_.size();
  for (const auto& [key, pts] : points_) n += pts.size();
  return n;
}

CalibrationTable CalibrationTable::load_csv(const std::string& path) {
  require_regular_file(path, "a calibration CSV");  // the CSV reader opens it itself: a FIFO would block
  CalibrationTable table;
  try {
    io::CSVReader<13, io::trim_chars<' ', '\t'>, io::no_quote_escape<','>, io::throw_on_overflow,
                  io::single_and_empty_line_comment<'#'>>
        in(path);
    in.read_header(io::ignore_missing_column, "device", "kernel", "m", "n", "k", "time_s", "efficiency", "batch",
                   "dtype", "layout", "bytes", "group_size", "bus_bandwidth_Bps");
    // The optional columns may be missing; the original six may not (files written before the optional
    // ones existed keep their meaning).
    for (const char* required : {"device", "kernel", "m", "n", "k", "time_s"})
      if (!in.has_column(required))
        throw InputError(path, "header",
                         std::string("missing column \"") + required + "\" (header must be: " + kHeader + ")");
    Row r;
    while (in.read_row(r.device, r.kernel, r.m, r.n, r.k, r.time_s, r.efficiency, r.batch, r.dtype, r.layout, r.bytes,
                       r.group_size, r.bus_bandwidth_Bps)) {
      const unsigned line = in.get_file_line();
      if (r.kernel == "gemm") {
        table.add(gemm_point(r, path, line), path, at(line, ""));
      } else if (efficiency_target(r.kernel)) {
        table.add(efficiency_row(r, path, line), path, at(line, ""));
      } else if (is_collective(r.kernel)) {
        table.add(collective_row(r, path, line), path, at(line, ""));
      } else {
        throw InputError(path, at(line, "kernel"), "unknown kernel '" + r.kernel + "' (expected " + kKernels + ")");
      }
    }
  } catch (const io::error::base& e) {
    // Recover the line and column libfccp knows about so the user can find the bad cell.
    std::string field;
    if (const auto* l = dynamic_cast<const io::error::with_file_line*>(&e); l != nullptr && l->file_line >= 0)
      field = "line " + std::to_string(l->file_line);
    if (const auto* c = dynamic_cast<const io::error::with_column_name*>(&e); c != nullptr && c->column_name[0] != '\0')
      field += (field.empty() ? "column " : ", column ") + std::string(c->column_name);
    if (field.empty()) field = "header";
    throw InputError(path, field,
                     std::string("malformed calibration CSV (header must be: ") + kHeader + "): " + e.what());
  }
  return table;
}

CalibratedGpu::CalibratedGpu(const DeviceSpec& device, CalibrationTable table)
    : base_(std::make_shared<const ShapeAwareGpu>(table.apply_efficiencies(device))),
      table_(std::move(table)),
      device_(device.name) {
  (void)require_device(device_, "calibration", "device");
}

CalibratedGpu::CalibratedGpu(std::shared_ptr<const GpuModel> base, CalibrationTable table, std::string device)
    : base_(std::move(base)), table_(std::move(table)), device_(std::move(device)) {
  if (!base_) throw std::invalid_argument("CalibratedGpu: null wrapped model");
  if (device_.empty()) device_ = base_->spec().name;
  (void)require_device(device_, "calibration", "device");
  if (table_.has_efficiencies(device_))
    throw std::invalid_argument("CalibratedGpu: efficiency rows for " + device_ +
                                " need the DeviceSpec constructor (an opaque model cannot take them)");
}

CalibratedGpu::Lookup CalibratedGpu::lookup(const Kernel& kernel) const {
  const bool has_shape = kernel.m > 0 && kernel.n > 0 && kernel.k > 0;
  if (kernel.kind != KernelKind::Gemm || !has_shape) return {base_->time_s(kernel), Origin::Model};
  const auto& pts = table_.points(device_, kernel.batch, kernel.dtype);
  if (pts.empty()) return {base_->time_s(kernel), Origin::Model};

  // Rule 1: the row of the kernel's layout, else one without a layout, else any of the shape.
  const CalibrationPoint* exact = nullptr;
  auto rank = [&](const CalibrationPoint& p) { return p.layout == kernel.layout ? 0 : (p.layout ? 2 : 1); };
  for (const auto& p : pts)
    if (p.m == kernel.m && p.n == kernel.n && p.k == kernel.k && (exact == nullptr || rank(p) < rank(*exact)))
      exact = &p;
  if (exact != nullptr) return {exact->time_s, Origin::Measured};

  // Use the shape's own flops (not kernel.flops) so the rule matches the table's flops exactly.
  const double f =
      CalibrationPoint{device_, kernel.m, kernel.n, kernel.k, 0, kernel.batch, kernel.dtype, std::nullopt}.flops();
  const double f_min = pts.front().flops();
  const double f_max = pts.back().flops();
  if (f < f_min || f > f_max) {
    const auto& edge = closest_with_flops(pts, f < f_min ? f_min : f_max, kernel);
    const double model_at_edge =
        base_->time_s(batched_gemm(edge.batch, edge.m, edge.n, edge.k, GemmLayout::NN, edge.dtype));
    const double scale = model_at_edge > 0 ? edge.time_s / model_at_edge : 1.0;
    return {base_->time_s(kernel) * scale, Origin::ScaledModel};
  }

  // pts is sorted by flops: the bracketing flops values are found by binary search.
  auto hi_it = std::lower_bound(pts.begin(), pts.end(), f,
                                [](const CalibrationPoint& p, double value) { return p.flops() < value; });
  const double f_hi = hi_it->flops();
  if (f_hi == f) return {closest_with_flops(pts, f, kernel).time_s, Origin::Interpolated};
  const double f_lo = std::prev(hi_it)->flops();
  const auto& lo = closest_with_flops(pts, f_lo, kernel);
  const auto& hi = closest_with_flops(pts, f_hi, kernel);
  const double w = (f - f_lo) / (f_hi - f_lo);
  return {lo.time_s + w * (hi.time_s - lo.time_s), Origin::Interpolated};
}

}  // namespace exasim::gpu
