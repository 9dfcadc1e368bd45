#include "traces/trace_summary.hpp"

#include "sim/core/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace exasim::trace {

namespace {

using Intervals = std::vector<std::pair<double, double>>;  // [start, end)

// Sorted, disjoint, non-empty intervals covering the same points.
Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& [s, e] : v) {
    if (!(e > s)) continue;
    if (!out.empty() && s <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(s, e);
    }
  }
  return out;
}

nlohmann::json classes_json(const ClassSeconds& c) {
  nlohmann::json j = nlohmann::json::object();
  for (int i = 0; i < kKernelClasses; ++i) j[std::string(to_string(static_cast<KernelClass>(i)))] = c[i];
  return j;
}

}  // namespace

double union_length_us(Intervals intervals) {
  double total = 0;
  for (const auto& [s, e] : merged(std::move(intervals))) total += e - s;
  return total;
}

double uncovered_length_us(Intervals a, Intervals b) {
  const auto ua = merged(std::move(a));
  const auto ub = merged(std::move(b));
  double total = 0;
  std::size_t j = 0;
  for (const auto& [s, e] : ua) {
    double covered = 0;
    while (j < ub.size() && ub[j].second <= s) ++j;
    for (std::size_t i = j; i < ub.size() && ub[i].first < e; ++i)
      covered += std::min(e, ub[i].second) - std::max(s, ub[i].first);
    total += (e - s) - covered;
  }
  return total;
}

int step_of(const MeasuredTrace& trace, const DeviceKernel& kernel) {
  double t = kernel.start_us;
  if (auto it = trace.launch_us.find(kernel.correlation); it != trace.launch_us.end()) t = it->second;
  // Steps are sorted by start and do not overlap (one ProfilerStep at a time).
  auto after = std::upper_bound(trace.steps.begin(), trace.steps.end(), t,
                                [](double v, const MeasuredStep& s) { return v < s.start_us; });
  if (after == trace.steps.begin()) return -1;
  const auto& step = *std::prev(after);
  if (t > step.start_us + step.dur_us) return -1;
  return static_cast<int>(std::prev(after) - trace.steps.begin());
}

TraceSummary summarize(const MeasuredTrace& trace) {
  TraceSummary s;
  s.source = trace.source;
  s.device = trace.device;
  s.rank = trace.rank;
  for (const auto& step : trace.steps) s.steps.push_back({step.name, step.dur_us * 1e-6, 0, 0, {}});

  // Sums in microseconds, converted once, so a summary reads the same as a sum over the file's `dur`s.
  double kernel_us = 0;
  ClassSeconds class_us{};
  std::vector<ClassSeconds> step_class_us(trace.steps.size(), ClassSeconds{});
  std::array<double, kCollectiveKinds> coll_us{};
  Intervals all, collective, other;
  all.reserve(trace.kernels.size());
  for (const auto& k : trace.kernels) {
    const auto cls = static_cast<std::size_t>(k.cls);
    kernel_us += k.dur_us;
    class_us[cls] += k.dur_us;
    const std::pair<double, double> span{k.start_us, k.start_us + k.dur_us};
    all.push_back(span);
    if (k.cls == KernelClass::Collective) {
      collective.push_back(span);
      auto& c = s.collectives[static_cast<std::size_t>(k.coll)];
      ++c.count;
      coll_us[static_cast<std::size_t>(k.coll)] += k.dur_us;
      if (k.bytes >= 0) {
        c.bytes += k.bytes;
        ++c.sized_count;
      }
    } else {
      other.push_back(span);
    }
    if (int step = step_of(trace, k); step >= 0) {
      auto& st = s.steps[static_cast<std::size_t>(step)];
      ++st.kernels;
      step_class_us[static_cast<std::size_t>(step)][cls] += k.dur_us;
    }
  }
  s.kernels = trace.kernels.size();
  s.kernel_time_s = kernel_us * 1e-6;
  for (int i = 0; i < kKernelClasses; ++i) s.classes[i] = class_us[i] * 1e-6;
  for (int i = 0; i < kCollectiveKinds; ++i) s.collectives[i].time_s = coll_us[i] * 1e-6;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    double sum = 0;
    for (int c = 0; c < kKernelClasses; ++c) {
      s.steps[i].classes[c] = step_class_us[i][c] * 1e-6;
      sum += step_class_us[i][c];
    }
    s.steps[i].kernel_time_s = sum * 1e-6;
  }
  s.gpu_busy_s = union_length_us(std::move(all)) * 1e-6;
  s.exposed_comm_s = uncovered_length_us(std::move(collective), std::move(other)) * 1e-6;
  s.copies = trace.copies;
  s.copy_time_s = trace.copy_time_us * 1e-6;
  return s;
}

TraceSummary total(const std::vector<TraceSummary>& summaries) {
  TraceSummary t;
  t.source = "total";
  for (const auto& s : summaries) {
    if (t.device.empty()) {
      t.device = s.device;
    } else if (t.device != s.device) {
      t.device = "mixed";
    }
    t.kernels += s.kernels;
    t.kernel_time_s += s.kernel_time_s;
    t.gpu_busy_s += s.gpu_busy_s;
    for (int i = 0; i < kKernelClasses; ++i) t.classes[i] += s.classes[i];
    for (int i = 0; i < kCollectiveKinds; ++i) {
      t.collectives[i].count += s.collectives[i].count;
      t.collectives[i].time_s += s.collectives[i].time_s;
      t.collectives[i].bytes += s.collectives[i].bytes;
      t.collectives[i].sized_count += s.collectives[i].sized_count;
    }
    t.exposed_comm_s += s.exposed_comm_s;
    t.copies += s.copies;
    t.copy_time_s += s.copy_time_s;
  }
  return t;
}

nlohmann::json to_json(const TraceSummary& s) {
  nlohmann::json j;
  j["source"] = s.source;
  j["device"] = s.device;
  if (s.rank >= 0) j["rank"] = s.rank;
  if (s.source != "total") {
    j["steps"] = nlohmann::json::array();
    for (const auto& st : s.steps)
      j["steps"].push_back({{"name", st.name},
                            {"duration_s", st.duration_s},
                            {"kernels", st.kernels},
                            {"kernel_time_s", st.kernel_time_s},
                            {"classes", classes_json(st.classes)}});
  }
  j["kernels"] = s.kernels;
  j["kernel_time_s"] = s.kernel_time_s;
  j["gpu_busy_s"] = s.gpu_busy_s;
  j["classes"] = classes_json(s.classes);
  j["collectives"] = nlohmann::json::object();
  for (int i = 0; i < kCollectiveKinds; ++i) {
    const auto& c = s.collectives[i];
    if (c.count == 0) continue;
    nlohmann::json e{{"count", c.count}, {"time_s", c.time_s}};
    if (c.sized_count > 0) e["bytes"] = c.bytes;
    if (c.sized_count > 0 && c.sized_count < c.count) e["sized_count"] = c.sized_count;
    j["collectives"][std::string(to_string(static_cast<CollectiveKind>(i)))] = e;
  }
  j["exposed_comm_s"] = s.exposed_comm_s;
  j["copies"] = {{"count", s.copies}, {"time_s", s.copy_time_s}};
  return j;
}

void print_summary(std::ostream& out, const TraceSummary& s) {
  auto ms = [](double seconds) { return fixed(seconds * 1e3, 3) + " ms"; };
  out << s.source << (s.rank >= 0 ? " (rank " + std::to_string(s.rank) + ")" : "") << ": " << s.device << "\n";
  if (s.source != "total") {
    if (s.steps.empty()) out << "  steps: none (no ProfilerStep# annotations)\n";
    for (const auto& st : s.steps)
      out << "  step " << st.name << ": " << ms(st.duration_s) << ", " << st.kernels << " kernels, "
          << ms(st.kernel_time_s) << " kernel time\n";
  }
  out << "  kernels: " << s.kernels << ", kernel time " << ms(s.kernel_time_s) << ", GPU busy " << ms(s.gpu_busy_s)
      << "\n";
  out << "  classes:";
  for (int i = 0; i < kKernelClasses; ++i)
    out << (i ? ", " : " ") << to_string(static_cast<KernelClass>(i)) << " " << ms(s.classes[i]);
  out << "\n";
  for (int i = 0; i < kCollectiveKinds; ++i) {
    const auto& c = s.collectives[i];
    if (c.count == 0) continue;
    out << "  " << to_string(static_cast<CollectiveKind>(i)) << ": " << c.count << " x, " << ms(c.time_s);
    if (c.sized_count > 0) out << ", " << fixed(c.bytes / 1e6, 3) << " MB";
    out << "\n";
  }
  out << "  exposed communication: " << ms(s.exposed_comm_s) << "\n";
  if (s.copies > 0) out << "  copies (memcpy/memset): " << s.copies << ", " << ms(s.copy_time_s) << "\n";
}

}  // namespace exasim::trace
