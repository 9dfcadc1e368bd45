#include "sim/report/summary_views.hpp"

#include <cstdio>
#include <ostream>
#include <string>
#include <variant>

namespace exasim::report {

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000 && u < 5) {
    b /= 1000;
    ++u;
  }
  return fixed(b, u == 0 ? 0 : 2) + " " + units[u];
}

std::string shown(const std::variant<std::int64_t, bool>& value) {
  if (const bool* on = std::get_if<bool>(&value)) return *on ? "on" : "off";
  return std::to_string(std::get<std::int64_t>(value));
}

}  // namespace

void print_summary(std::ostream& out, const Summary& s) {
  const double t = s.iteration_time_s;
  out << "exasim simulate: " << s.scenario << "\n"
      << "  " << s.model << " (" << fixed(s.parameters / 1e9, 1) << "B parameters) on " << s.gpus << " x " << s.gpu
      << " (" << s.machine << "), " << s.scheme;
  for (const auto& field : s.layout) out << " " << field.name << "=" << shown(field.value);
  out << ", global batch " << s.global_batch << "\n"
      << "  " << s.dtype << ", " << s.attention << " attention, dropout " << s.dropout << ", recompute " << s.recompute
      << "\n"
      << "  network " << s.network << ", routing " << s.routing << ", placement " << s.placement << ", collectives "
      << s.collectives << "\n\n"
      << "  iteration time   " << fixed(t, 4) << " s\n"
      << "  throughput       " << fixed(s.tflops_per_gpu, 1) << " TFLOP/s per GPU, " << fixed(s.percent_of_peak, 1)
      << "% of the " << fixed(s.peak_tflops_per_gpu, 1) << " TFLOP/s peak; " << fixed(s.total_pflops, 2)
      << " PFLOP/s in total\n"
      << "                   (hardware flops, recomputation included; model flops give "
      << fixed(s.model_tflops_per_gpu, 1) << " TFLOP/s, MFU " << fixed(s.mfu_percent, 1) << "%)\n\n"
      << "  where the time goes (mean over ranks):\n";
  auto line = [&](const std::string& label, double seconds) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "    %-22s %10.4f s  %5.1f%%\n", label.c_str(), seconds,
                  t > 0 ? 100 * seconds / t : 0);
    out << buf;
  };
  line("compute", s.compute_s);
  for (const auto& d : s.dimensions) line("exposed comm " + d.name, d.exposed_comm_s);
  line("idle (waiting to end)", s.idle_s);
  if (s.compute_by_kernel) {
    out << "\n  compute by kernel class (mean over stages, recomputation included):\n";
    for (const auto& c : *s.compute_by_kernel) line(c.kernel_class, c.seconds);
  }
  const auto& m = s.memory;
  out << "\n  memory per GPU     " << fixed(m.total() / 1e9, 1) << " GB of " << fixed(s.memory_capacity_bytes / 1e9, 1)
      << " GB (weights " << fixed(m.weights / 1e9, 1) << ", gradients " << fixed(m.gradients / 1e9, 1) << ", optimizer "
      << fixed(m.optimizer / 1e9, 1) << ", activations " << fixed(m.activations / 1e9, 1) << ", workspace "
      << fixed(m.workspace / 1e9, 1) << ")\n";
  const auto& mb = s.memory_basis;
  out << "                     " << mb.dtype << " weights, " << fixed(mb.gradient_bytes, 0)
      << " B gradients, recompute " << mb.recompute << ", " << mb.attention << " attention, dropout "
      << fixed(mb.dropout, 2) << "\n";
  out << "\n  communication of rank 0 (bytes on the wire):\n";
  for (const auto& d : s.dimensions) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "    %-6s %12s in %6llu collectives\n", d.name.c_str(),
                  human_bytes(d.rank0_wire_bytes).c_str(), static_cast<unsigned long long>(d.rank0_collectives));
    out << buf;
  }
  out << "\n  simulated " << s.events << " events and " << s.flows << " flows (" << s.backend << " backend)\n";
}

}  // namespace exasim::report
