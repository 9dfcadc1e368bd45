#include "traces/trace_compare.hpp"

#include "sim/core/output_files.hpp"
#include "sim/core/text_format.hpp"
#include "traces/trace_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>

namespace exasim::trace {

namespace {

struct Totals {
  ClassSeconds class_us{};
  std::map<std::string, std::pair<double, double>> coll;  // name -> (count, microseconds)
};

void add(Totals& t, const DeviceKernel& k) {
  t.class_us[static_cast<std::size_t>(k.cls)] += k.dur_us;
  if (k.cls != KernelClass::Collective) return;
  auto& c = t.coll[std::string(to_string(k.coll)) + " " + size_band(k.bytes)];
  c.first += 1;
  c.second += k.dur_us;
}

std::string ratio(double simulated, double measured) {
  return measured > 0 ? fixed(simulated / measured, 2) : std::string("-");
}

}  // namespace

std::string size_band(double bytes) {
  if (bytes < 0) return "unknown";
  constexpr double kKiB = 1024.0;
  if (bytes < 64 * kKiB) return "<64KiB";
  if (bytes < kKiB * kKiB) return "64KiB-1MiB";
  if (bytes < 16 * kKiB * kKiB) return "1MiB-16MiB";
  if (bytes < 256 * kKiB * kKiB) return "16MiB-256MiB";
  return ">=256MiB";
}

Comparison compare(const std::vector<MeasuredTrace>& measured, const MeasuredTrace& simulated,
                   double simulated_iteration_s, const std::string& scenario) {
  Comparison c;
  c.scenario = scenario;
  Totals m;
  double step_us = 0, busy_us = 0;
  for (const auto& t : measured) {
    c.measured.push_back(t.rank >= 0 ? t.source + " (rank " + std::to_string(t.rank) + ")" : t.source);
    if (t.steps.empty()) {
      double first = 0, last = 0;
      std::vector<std::pair<double, double>> spans;
      for (std::size_t i = 0; i < t.kernels.size(); ++i) {
        const auto& k = t.kernels[i];
        first = i == 0 ? k.start_us : std::min(first, k.start_us);
        last = i == 0 ? k.start_us + k.dur_us : std::max(last, k.start_us + k.dur_us);
        add(m, k);
        spans.emplace_back(k.start_us, k.start_us + k.dur_us);
      }
      busy_us += union_length_us(std::move(spans));
      step_us += last - first;
      c.measured_steps += 1;
      continue;
    }
    std::vector<std::vector<std::pair<double, double>>> spans(t.steps.size());
    for (const auto& k : t.kernels) {
      const int step = step_of(t, k);
      if (step < 0) continue;
      add(m, k);
      spans[static_cast<std::size_t>(step)].emplace_back(k.start_us, k.start_us + k.dur_us);
    }
    for (auto& v : spans) busy_us += union_length_us(std::move(v));
    for (const auto& s : t.steps) step_us += s.dur_us;
    c.measured_steps += t.steps.size();
  }
  const double per_step = c.measured_steps > 0 ? 1.0 / static_cast<double>(c.measured_steps) : 0.0;
  c.measured_step_s = step_us * 1e-6 * per_step;
  c.simulated_iteration_s = simulated_iteration_s;
  c.measured_busy_s = busy_us * 1e-6 * per_step;

  Totals s;
  std::vector<std::pair<double, double>> sim_spans;
  for (const auto& k : simulated.kernels) {
    add(s, k);
    sim_spans.emplace_back(k.start_us, k.start_us + k.dur_us);
  }
  c.simulated_busy_s = union_length_us(std::move(sim_spans)) * 1e-6;
  for (int i = 0; i < kKernelClasses; ++i)
    c.classes.push_back({std::string(to_string(static_cast<KernelClass>(i))), m.class_us[i] * 1e-6 * per_step,
                         s.class_us[i] * 1e-6, 0, 0});
  std::set<std::string> names;
  for (const auto& [name, v] : m.coll) names.insert(name);
  for (const auto& [name, v] : s.coll) names.insert(name);
  for (const auto& name : names) {
    CompareLine line{name, 0, 0, 0, 0};
    if (auto it = m.coll.find(name); it != m.coll.end()) {
      line.measured_count = it->second.first * per_step;
      line.measured_s = it->second.second * 1e-6 * per_step;
    }
    if (auto it = s.coll.find(name); it != s.coll.end()) {
      line.simulated_count = it->second.first;
      line.simulated_s = it->second.second * 1e-6;
    }
    c.collectives.push_back(line);
  }
  return c;
}

nlohmann::json to_json(const Comparison& c) {
  auto lines = [](const std::vector<CompareLine>& v, bool counts) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& l : v) {
      nlohmann::json e{{"measured_s", l.measured_s}, {"simulated_s", l.simulated_s}};
      if (counts) {
        e["measured_count"] = l.measured_count;
        e["simulated_count"] = l.simulated_count;
      }
      j[l.name] = e;
    }
    return j;
  };
  return {{"scenario", c.scenario},
          {"measured", c.measured},
          {"measured_steps", c.measured_steps},
          {"step", {{"measured_s", c.measured_step_s}, {"simulated_s", c.simulated_iteration_s}}},
          {"gpu_busy", {{"measured_s", c.measured_busy_s}, {"simulated_s", c.simulated_busy_s}}},
          {"classes", lines(c.classes, false)},
          {"collectives", lines(c.collectives, true)}};
}

void print_comparison(std::ostream& out, const Comparison& c) {
  auto ms = [](double s) { return fixed(s * 1e3, 3); };
  out << "measured: " << c.measured_steps << " steps of";
  for (const auto& m : c.measured) out << " " << m;
  out << "\nsimulated: " << c.scenario << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %14s %14s %9s\n", "per step", "measured ms", "simulated ms", "sim/meas");
  out << line;
  auto row = [&](const std::string& name, double meas, double sim) {
    std::snprintf(line, sizeof line, "%-28s %14s %14s %9s\n", name.c_str(), ms(meas).c_str(), ms(sim).c_str(),
                  ratio(sim, meas).c_str());
    out << line;
  };
  row("step", c.measured_step_s, c.simulated_iteration_s);
  row("GPU busy", c.measured_busy_s, c.simulated_busy_s);
  for (const auto& l : c.classes) row("  " + l.name, l.measured_s, l.simulated_s);
  if (c.collectives.empty()) return;
  std::snprintf(line, sizeof line, "%-28s %14s %14s %9s %9s\n", "collectives per step", "measured ms", "simulated ms",
                "meas n", "sim n");
  out << line;
  for (const auto& l : c.collectives) {
    std::snprintf(line, sizeof line, "%-28s %14s %14s %9s %9s\n", ("  " + l.name).c_str(), ms(l.measured_s).c_str(),
                  ms(l.simulated_s).c_str(), fixed(l.measured_count, 1).c_str(), fixed(l.simulated_count, 0).c_str());
    out << line;
  }
}

void write_side_by_side(const std::string& path, const std::vector<MeasuredTrace>& measured,
                        const std::vector<TraceRow>& simulated) {
  // Numeric pids and tids with process_name / thread_name metadata: what both Perfetto and
  // chrome://tracing read.
  nlohmann::json events = nlohmann::json::array();
  auto meta = [&](const char* what, int pid, std::int64_t tid, const std::string& name) {
    events.push_back({{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
  };
  auto event = [&](const std::string& name, const std::string& cat, double ts, double dur, int pid, std::int64_t tid) {
    events.push_back({{"name", name}, {"cat", cat}, {"ph", "X"}, {"ts", ts}, {"dur", dur}, {"pid", pid}, {"tid", tid}});
  };
  int pid = 0;
  for (const auto& t : measured) {
    ++pid;
    meta("process_name", pid, 0,
         "measured " + t.source + (t.rank >= 0 ? " (rank " + std::to_string(t.rank) + ")" : std::string()));
    double origin = t.kernels.front().start_us;
    for (const auto& k : t.kernels) origin = std::min(origin, k.start_us);
    if (!t.steps.empty()) origin = t.steps.front().start_us;
    meta("thread_name", pid, 0, "steps");
    for (const auto& s : t.steps) event(s.name, "step", s.start_us - origin, s.dur_us, pid, 0);
    std::set<std::int64_t> streams;
    for (const auto& k : t.kernels) {
      streams.insert(k.stream);
      event(t.name_of(k), std::string(to_string(k.cls)), k.start_us - origin, k.dur_us, pid, k.stream + 1);
    }
    for (auto stream : streams) meta("thread_name", pid, stream + 1, "stream " + std::to_string(stream));
  }
  std::set<std::uint32_t> ranks;
  for (const auto& r : simulated) ranks.insert(r.rank);
  const int base = pid + 1;
  for (auto rank : ranks) {
    const int p = base + static_cast<int>(rank);
    meta("process_name", p, 0, "simulated rank " + std::to_string(rank));
    meta("thread_name", p, 0, "compute");
    meta("thread_name", p, 1, "communication");
    meta("thread_name", p, 2, "wait");
  }
  for (const auto& r : simulated) {
    const bool compute = r.kind == "gemm" || r.kind == "attention" || r.kind == "memory";
    const std::int64_t tid = compute ? 0 : (r.kind == "wait" ? 2 : 1);
    event(r.op, r.kind, r.t_start_s * 1e6, (r.t_end_s - r.t_start_s) * 1e6, base + static_cast<int>(r.rank), tid);
  }
  write_stream_checked(path, [&](std::ostream& out) {
    out << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(
               -1, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  });
}

}  // namespace exasim::trace
