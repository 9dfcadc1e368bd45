#include "sim/cli/trace_calibration.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/devices.hpp"
#include "traces/measured.hpp"
#include "traces/trace_rates.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

namespace exasim::cli {

namespace {

constexpr double kMinMemoryBytesPerOp = 1024.0 * 1024.0;
constexpr double kMinAttentionFlopsPerOp = 1e9;

// Twelve significant digits: beyond what a trace measures (ns of a ms kernel), short of the noise a
// median in double adds (0.0020282929999999996); whole numbers such as byte counts stay exact.
std::string num(double v) {
  char buf[64];
  if (std::abs(v) < 1e15 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.12g", v);
  }
  return buf;
}

// Text from a trace (a file or device name) on a comment line: a newline in it would start a row.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// Four significant digits, for the comment lines a reader skims.
std::string approx(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string known_devices() {
  std::string list;
  for (const auto& name : gpu::device_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

// The device of a trace from its deviceProperties name, or "" when the name does not say.
std::string device_from_name(const trace::MeasuredTrace& t) {
  const auto& n = t.device;
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("A100")) return t.device_memory_bytes > 60e9 ? "a100-80gb" : "a100-40gb";
  if (has("GH200")) return "gh200";
  if (has("H200")) return "h200";
  if (has("H100")) return "h100-sxm";
  if (has("MI250X")) return "mi250x-gcd";
  return "";
}

std::string resolve_device(const std::vector<trace::MeasuredTrace>& traces, const std::string& device) {
  if (!device.empty()) return gpu::require_device(device, "--device", device).name;
  std::string chosen;
  for (const auto& t : traces) {
    const auto d = device_from_name(t);
    if (d.empty())
      throw InputError(
          t.source, "deviceProperties[0].name",
          "'" + t.device + "' does not name a device exasim knows; pass --device (one of " + known_devices() + ")");
    if (!chosen.empty() && d != chosen)
      throw InputError(
          t.source, "deviceProperties[0].name",
          "'" + t.device + "' is " + d + ", the other traces " + chosen + ": calibrate one device at a time");
    chosen = d;
  }
  return chosen;
}

}  // namespace

std::string calibration_csv_from_traces(const std::vector<std::string>& files, const std::string& device,
                                        std::ostream& log) {
  std::vector<trace::MeasuredTrace> traces;
  for (const auto& f : files) traces.push_back(trace::read_kineto(f));
  const std::string dev = resolve_device(traces, device);
  const auto& spec = gpu::require_device(dev, "--device", dev);
  const auto rates = trace::measure_rates(traces);

  std::ostringstream csv;
  csv << "# exasim calibrate --from-trace:";
  for (const auto& t : traces) csv << " " << one_line(t.source);
  csv << "\n# device: '" << one_line(traces.front().device) << "' -> " << dev << "\n";
  csv << "device,kernel,m,n,k,time_s,batch,dtype,efficiency,layout,bytes,group_size,bus_bandwidth_Bps\n";

  if (!rates.gemms.empty()) csv << "# gemm: median time of each shape (record_shapes), TFLOP/s in the comment\n";
  for (const auto& g : rates.gemms) {
    if (!(g.time_s > 0)) {  // the loader refuses a zero time: such a shape is noted, not written
      csv << "# " << g.batch << " x " << g.m << "x" << g.n << "x" << g.k << " " << g.dtype
          << ": no row (its kernels measured 0 s)\n";
      continue;
    }
    csv << "# " << g.batch << " x " << g.m << "x" << g.n << "x" << g.k << " " << g.dtype << " "
        << (g.layout.empty() ? "?" : g.layout) << ": " << g.count << (g.count == 1 ? " call, " : " calls, ")
        << approx(g.flops() / g.time_s / 1e12) << " TFLOP/s\n";
    const bool known_layout = g.layout == "NN" || g.layout == "NT" || g.layout == "TN";
    csv << dev << ",gemm," << g.m << "," << g.n << "," << g.k << "," << num(g.time_s) << "," << g.batch << ","
        << g.dtype << ",," << (known_layout ? g.layout : "") << ",,,\n";
  }
  log << "calibrate --from-trace: " << dev << ": " << rates.gemms.size() << " GEMM shapes";
  if (rates.gemm_kernels_without_shape > 0)
    log << " (" << rates.gemm_kernels_without_shape << " GEMM kernels without a recorded shape)";

  if (rates.memory.ops > 0) {
    const double bw = rates.memory.rate();
    const double eff = bw / spec.hbm_bandwidth_Bps.value;
    const double per_op = rates.memory.work / static_cast<double>(rates.memory.ops);
    csv << "# memory-bound: " << rates.memory.ops << " ops moved " << approx(rates.memory.work) << " bytes in "
        << approx(rates.memory.time_s) << " s = " << approx(bw / 1e9) << " GB/s, " << approx(eff) << " of HBM; mean "
        << approx(per_op) << " bytes per op\n";
    if (per_op >= kMinMemoryBytesPerOp && eff <= 1) {
      csv << dev << ",elementwise,,,,,,," << num(eff) << ",,,,\n";
    } else {
      csv << "# (no elementwise row: under 1 MiB per op the kernels measure launch latency, not bandwidth)\n";
    }
  }
  if (rates.attention.ops > 0) {
    auto dtype = gpu::parse_dtype(rates.attention.dtype).value_or(gpu::DType::Bf16);
    const double eff = rates.attention.rate() / spec.peak_flops(dtype);
    const double per_op = rates.attention.work / static_cast<double>(rates.attention.ops);
    csv << "# attention: " << rates.attention.ops << " ops, " << approx(rates.attention.rate() / 1e12)
        << " TFLOP/s = " << approx(eff) << " of the " << gpu::to_string(dtype) << " peak\n";
    if (per_op >= kMinAttentionFlopsPerOp && eff <= 1) {
      csv << dev << ",attention,,,,,,," << num(eff) << ",,,,\n";
    } else {
      csv << "# (no attention row: under 1 GFLOP per op)\n";
    }
  }
  // Commented out: no network model reads collective rows yet, and a scenario refuses a calibration file
  // that has one (gpu::load_gpu_choice); the figures stay for the reader, and a row once that changes.
  if (!rates.collectives.empty())
    csv << "# collectives: median time per size; bus bandwidth as nccl-tests defines it (rows commented out: "
           "no network model uses them yet)\n";
  for (const auto& c : rates.collectives) {
    csv << "# " << trace::to_string(c.kind) << " " << num(c.bytes) << " bytes, group " << c.group_size << ": "
        << c.count << (c.count == 1 ? " call, " : " calls, ") << approx(c.bus_bandwidth_Bps / 1e9)
        << " GB/s bus bandwidth\n";
    if (c.kind == trace::CollectiveKind::Other) {
      csv << "# (no row: not a collective the calibration CSV knows)\n";
      continue;
    }
    if (!(c.time_s > 0 && c.bytes > 0 && c.bus_bandwidth_Bps > 0)) {
      csv << "# (no row: measured 0 s or 0 bytes)\n";
      continue;
    }
    csv << "# " << dev << "," << trace::to_string(c.kind) << ",,,," << num(c.time_s) << ",,,,," << num(c.bytes) << ","
        << (c.group_size > 0 ? std::to_string(c.group_size) : "") << "," << num(c.bus_bandwidth_Bps) << "\n";
  }
  log << ", memory-bound " << rates.memory.ops << " ops, attention " << rates.attention.ops << " ops, "
      << rates.collectives.size() << " collective sizes\n";
  return csv.str();
}

}  // namespace exasim::cli
