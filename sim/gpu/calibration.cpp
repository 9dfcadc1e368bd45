#include "sim/gpu/calibration.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/devices.hpp"

// libfccp copies file names with strncpy into fixed buffers; GCC flags that as possible truncation when
// it inlines the header into our code. The truncation is intended (error messages only), so silence it here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <tuple>

namespace exasim::gpu {

namespace {

constexpr const char* kHeader = "device,kernel,m,n,k,time_s";

std::string at(unsigned line, const std::string& column) {
  std::string where = "line " + std::to_string(line);
  if (!column.empty()) where += ", column " + column;
  return where;
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
// should round-trip exactly, so time_s is parsed with from_chars.
double parse_seconds(const std::string& text, const std::string& path, unsigned line) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw InputError(path, at(line, "time_s"), "not a number: '" + text + "'");
  return value;
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
  auto where = [&](const char* column) { return field.empty() ? std::string(column) : field + ", column " + column; };
  (void)require_device(p.device, source, where("device"));
  if (p.kind != KernelKind::Gemm)
    throw InputError(source, where("kernel"),
                     "only 'gemm' rows can be calibrated (attention and memory kernels carry no m, n, k to match)");
  if (p.m <= 0) throw InputError(source, where("m"), "must be a positive integer");
  if (p.n <= 0) throw InputError(source, where("n"), "must be a positive integer");
  if (p.k <= 0) throw InputError(source, where("k"), "must be a positive integer");
  if (!(p.time_s > 0) || !std::isfinite(p.time_s))
    throw InputError(source, where("time_s"), "must be a positive number of seconds");

  auto& pts = points_[{p.device, p.kind}];
  auto key = [](const CalibrationPoint& q) { return std::make_tuple(q.flops(), q.m, q.n, q.k); };
  auto pos = std::lower_bound(pts.begin(), pts.end(), p,
                              [&](const CalibrationPoint& a, const CalibrationPoint& b) { return key(a) < key(b); });
  if (pos != pts.end() && pos->m == p.m && pos->n == p.n && pos->k == p.k)
    throw InputError(source, field.empty() ? std::string("m,n,k") : field,
                     "duplicate row for " + p.device + " gemm " + std::to_string(p.m) + "x" + std::to_string(p.n) +
                         "x" + std::to_string(p.k));
  pts.insert(pos, p);
}

const std::vector<CalibrationPoint>& CalibrationTable::points(std::string_view device, KernelKind kind) const {
  static const std::vector<CalibrationPoint> none;
  auto it = points_.find({std::string(device), kind});
  return it == points_.end() ? none : it->second;
}

std::size_t CalibrationTable::size() const {
  std::size_t n = 0;
  for (const auto& [key, pts] : points_) n += pts.size();
  return n;
}

CalibrationTable CalibrationTable::load_csv(const std::string& path) {
  CalibrationTable table;
  try {
    io::CSVReader<6, io::trim_chars<' ', '\t'>, io::no_quote_escape<','>, io::throw_on_overflow,
                  io::single_and_empty_line_comment<'#'>>
        in(path);
    in.read_header(io::ignore_no_column, "device", "kernel", "m", "n", "k", "time_s");
    CalibrationPoint p;
    std::string kernel;
    std::string time_text;
    long long m = 0, n = 0, k = 0;
    while (in.read_row(p.device, kernel, m, n, k, time_text)) {
      const unsigned line = in.get_file_line();
      p.time_s = parse_seconds(time_text, path, line);
      if (kernel == "gemm") {
        p.kind = KernelKind::Gemm;
      } else if (kernel == "attention" || kernel == "memory") {
        p.kind = kernel == "attention" ? KernelKind::FlashAttention : KernelKind::MemoryBound;
      } else {
        throw InputError(path, at(line, "kernel"), "unknown kernel '" + kernel + "' (expected gemm)");
      }
      p.m = m;
      p.n = n;
      p.k = k;
      table.add(p, path, at(line, ""));
    }
  } catch (const io::error::base& e) {
    // Recover the line and column libfccp knows about so the user can find the bad cell.
    std::string field;
    if (const auto* l = dynamic_cast<const io::error::with_file_line*>(&e); l != nullptr && l->file_line >= 0)
      field = "line " + std::to_string(l->file_line);
    if (const auto* c = dynamic_cast<const io::error::with_column_name*>(&e); c != nullptr && c->column_name[0] != '\0')
      field += (field.empty() ? "column " : ", column ") + std::string(c->column_name);
    if (field.empty()) field = "header";
    throw InputError(path, field, std::string("malformed calibration CSV (header must be: ") + kHeader + "): " +
                                      e.what());
  }
  return table;
}

CalibratedGpu::CalibratedGpu(std::shared_ptr<const GpuModel> base, CalibrationTable table, std::string device)
    : base_(std::move(base)), table_(std::move(table)), device_(std::move(device)) {
  if (!base_) throw std::invalid_argument("CalibratedGpu: null wrapped model");
  if (device_.empty()) device_ = base_->spec().name;
  (void)require_device(device_, "calibration", "device");
}

CalibratedGpu::Lookup CalibratedGpu::lookup(const Kernel& kernel) const {
  const bool has_shape = kernel.m > 0 && kernel.n > 0 && kernel.k > 0;
  const auto& pts = table_.points(device_, kernel.kind);
  if (kernel.kind != KernelKind::Gemm || !has_shape || pts.empty()) return {base_->time_s(kernel), Origin::Model};

  for (const auto& p : pts)
    if (p.m == kernel.m && p.n == kernel.n && p.k == kernel.k) return {p.time_s, Origin::Measured};

  // Use the shape's own flops (not kernel.flops) so the rule matches the table's flops exactly.
  const double f = CalibrationPoint{device_, kernel.kind, kernel.m, kernel.n, kernel.k, 0}.flops();
  const double f_min = pts.front().flops();
  const double f_max = pts.back().flops();
  if (f < f_min || f > f_max) {
    const auto& edge = closest_with_flops(pts, f < f_min ? f_min : f_max, kernel);
    const double model_at_edge = base_->time_s(gemm(edge.m, edge.n, edge.k));
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
