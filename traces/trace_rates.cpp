#include "traces/trace_rates.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace exasim::trace {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The kernels of one CPU op instance (one External id of one file), of one class.
struct OpKernels {
  double time_us = 0;
  double longest_us = -1;
  std::uint32_t main_kernel = 0;  // the longest one: the GEMM itself rather than its split-K reduction
};

std::map<std::int64_t, OpKernels> kernels_by_op(const MeasuredTrace& t, KernelClass cls) {
  std::map<std::int64_t, OpKernels> ops;
  for (const auto& k : t.kernels) {
    if (k.cls != cls || k.external_id < 0) continue;
    auto& op = ops[k.external_id];
    op.time_us += k.dur_us;
    if (k.dur_us > op.longest_us) {
      op.longest_us = k.dur_us;
      op.main_kernel = k.name;
    }
  }
  return ops;
}

// Flops of an attention op from its query dims, or 0 when the op is not one this rule knows.
double attention_flops(const OpShape& op) {
  const auto& d = op.first_dims;
  if (d.size() != 4 || op.op.find("attention") == std::string::npos) return 0;
  double b = 0, h = 0, l = 0, e = 0;
  if (op.op.find("scaled_dot_product") != std::string::npos) {  // query [B, H, L, E]
    b = static_cast<double>(d[0]), h = static_cast<double>(d[1]), l = static_cast<double>(d[2]),
    e = static_cast<double>(d[3]);
  } else {  // _flash_attention_* / _efficient_attention_*: query [B, L, H, E]
    b = static_cast<double>(d[0]), l = static_cast<double>(d[1]), h = static_cast<double>(d[2]),
    e = static_cast<double>(d[3]);
  }
  const double forward = 4.0 * b * h * l * l * e;
  return op.op.find("backward") != std::string::npos ? 2.5 * forward : forward;
}

}  // namespace

double bus_bandwidth_factor(CollectiveKind kind, int group_size) {
  if (group_size <= 1) return 1.0;  // unknown group: the algorithm bandwidth
  const double n = group_size;
  switch (kind) {
    case CollectiveKind::AllReduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll: return (n - 1) / n;
    default: return 1.0;
  }
}

TraceRates measure_rates(const std::vector<MeasuredTrace>& traces) {
  TraceRates r;
  using GemmKey = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::string>;
  std::map<GemmKey, std::vector<double>> gemm_times;
  using CollKey = std::tuple<int, int, double>;
  std::map<CollKey, std::vector<double>> coll_times;

  for (const auto& t : traces) {
    for (const auto& k : t.kernels)
      if (k.cls == KernelClass::Gemm && (k.external_id < 0 || !t.op_shapes.count(k.external_id)))
        ++r.gemm_kernels_without_shape;
    for (const auto& [id, op] : kernels_by_op(t, KernelClass::Gemm)) {
      auto it = t.op_shapes.find(id);
      if (it == t.op_shapes.end()) continue;
      const auto& s = it->second;
      const std::string dtype = calibration_dtype(s.dtype);
      if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0 || dtype.empty()) {
        ++r.gemm_kernels_without_shape;
        continue;
      }
      gemm_times[{dtype, s.batch, s.m, s.n, s.k, gemm_layout(t.names[op.main_kernel])}].push_back(op.time_us * 1e-6);
    }
    for (const auto& [id, op] : kernels_by_op(t, KernelClass::Memory)) {
      auto it = t.op_shapes.find(id);
      if (it == t.op_shapes.end() || it->second.input_bytes <= 0) continue;
      ++r.memory.ops;
      r.memory.work += it->second.input_bytes + it->second.largest_input_bytes;
      r.memory.time_s += op.time_us * 1e-6;
    }
    for (const auto& [id, op] : kernels_by_op(t, KernelClass::Attention)) {
      auto it = t.op_shapes.find(id);
      if (it == t.op_shapes.end()) continue;
      const double flops = attention_flops(it->second);
      if (flops <= 0) continue;
      ++r.attention.ops;
      r.attention.work += flops;
      r.attention.time_s += op.time_us * 1e-6;
      if (r.attention.dtype.empty()) r.attention.dtype = calibration_dtype(it->second.dtype);
    }
    for (const auto& k : t.kernels) {
      if (k.cls != KernelClass::Collective || !(k.bytes > 0 && std::isfinite(k.bytes)) || k.dur_us <= 0) continue;
      const int group = k.group_size > 0 ? k.group_size : t.world_size;
      coll_times[{static_cast<int>(k.coll), group, k.bytes}].push_back(k.dur_us * 1e-6);
    }
  }
  for (const auto& [key, times] : gemm_times) {
    const auto& [dtype, batch, m, n, k, layout] = key;
    r.gemms.push_back({batch, m, n, k, dtype, layout, times.size(), median(times)});
  }
  for (const auto& [key, times] : coll_times) {
    const auto& [kind, group, bytes] = key;
    CollectiveRate c;
    c.kind = static_cast<CollectiveKind>(kind);
    c.group_size = group;
    c.bytes = bytes;
    c.count = times.size();
    c.time_s = median(times);
    c.bus_bandwidth_Bps = bytes / c.time_s * bus_bandwidth_factor(c.kind, group);
    r.collectives.push_back(c);
  }
  return r;
}

}  // namespace exasim::trace
