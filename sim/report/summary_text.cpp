#include "sim/report/summary_views.hpp"

#include "sim/core/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace exasim::report {

namespace {

/// 39.2B, 5.0B, 125M, 26.6M, 48K: a parameter count as people write it (0.0B said nothing).
std::string human_count(double n) {
  if (n >= 1e9) return fixed(n / 1e9, 1) + "B";
  if (n >= 1e6) return fixed(n / 1e6, n >= 1e8 ? 0 : 1) + "M";
  if (n >= 1e3) return fixed(n / 1e3, 0) + "K";
  return fixed(n, 0);
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

struct GroupPair {
  std::uint32_t from, to;
  double bytes;
};

/// The pairs of a groups x groups matrix that carried bytes, busiest first (ties in matrix order).
std::vector<GroupPair> busiest_pairs(const std::vector<std::vector<double>>& bytes) {
  std::vector<GroupPair> pairs;
  for (std::uint32_t g = 0; g < bytes.size(); ++g)
    for (std::uint32_t h = 0; h < bytes[g].size(); ++h)
      if (bytes[g][h] > 0) pairs.push_back({g, h, bytes[g][h]});
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const GroupPair& a, const GroupPair& b) { return a.bytes > b.bytes; });
  return pairs;
}

void print_pairs(std::ostream& out, const std::vector<GroupPair>& pairs) {
  char buf[200];
  for (std::size_t k = 0; k < std::min<std::size_t>(pairs.size(), 5); ++k) {
    std::snprintf(buf, sizeof buf, "      group %u -> group %u  %s\n", pairs[k].from, pairs[k].to,
                  human_bytes(pairs[k].bytes).c_str());
    out << buf;
  }
}

/// Link classes, then the hottest links, then the busiest group pairs (global links), all traffic and
/// each all-to-all dimension's.
void print_links(std::ostream& out, const LinkReport& links) {
  char buf[200];
  out << "\n  link loads (utilisation: bytes over what the link could carry in the iteration):\n";
  std::snprintf(buf, sizeof buf, "    %-12s %8s %8s %12s %12s %10s %10s\n", "class", "links", "used", "bytes",
                "mean busy s", "mean util", "max util");
  out << buf;
  for (const auto& c : links.classes) {
    std::snprintf(buf, sizeof buf, "    %-12s %8llu %8llu %12s %12.4f %9.1f%% %9.1f%%\n", c.link_class.c_str(),
                  static_cast<unsigned long long>(c.links), static_cast<unsigned long long>(c.used),
                  human_bytes(c.bytes).c_str(), c.mean_busy_s, 100 * c.mean_utilisation, 100 * c.max_utilisation);
    out << buf;
  }
  if (!links.hottest.empty()) out << "    hottest links:\n";
  for (const auto& h : links.hottest) {
    std::snprintf(buf, sizeof buf, "      %5.1f%%  %10s  %-9s %s -> %s (link %u)\n", 100 * h.utilisation,
                  human_bytes(h.bytes).c_str(), h.link_class.c_str(), h.from.c_str(), h.to.c_str(), h.link);
    out << buf;
  }
  if (links.groups < 2) return;
  const auto pairs = busiest_pairs(links.group_bytes);
  out << "    global traffic: " << pairs.size() << " group pairs carry bytes";
  if (!pairs.empty()) out << "; the busiest:";
  out << "\n";
  print_pairs(out, pairs);
  for (const auto& d : links.all_to_all_group_bytes) {
    const auto own = busiest_pairs(d.bytes);
    double total = 0;
    for (const auto& p : own) total += p.bytes;
    out << "    all-to-all traffic on " << d.dim << ": " << own.size() << " group pairs carry " << human_bytes(total);
    if (!own.empty()) out << "; the busiest:";
    out << "\n";
    print_pairs(out, own);
  }
}

}  // namespace

void print_summary(std::ostream& out, const Summary& s) {
  const double t = s.iteration_time_s;
  // The emulation (backend "mpi") measured the iteration on real processes: no simulated events.
  const bool measured = s.backend == "mpi";
  out << (measured ? "exasim emulate: " : "exasim simulate: ") << s.scenario << "\n"
      << "  " << s.model << " (" << human_count(s.parameters) << " parameters) on " << s.gpus << " x " << s.gpu << " ("
      << s.machine << "), " << s.scheme;
  for (const auto& field : s.layout) out << " " << field.name << "=" << scenario::shown(field);
  out << ", global batch " << s.global_batch << "\n"
      << "  " << s.dtype << ", " << s.attention << " attention, dropout " << s.dropout << ", recompute " << s.recompute
      << "\n";
  if (s.experts) {
    const auto& x = *s.experts;
    out << "  experts " << x.experts << ", top " << x.top_k << " (" << human_count(x.active_parameters)
        << " parameters active), ep " << x.ep << ": the busiest expert-parallel rank takes "
        << fixed(x.busiest_over_mean, 2) << " x the mean load";
    if (x.dropped > 0) out << ", " << fixed(100 * x.dropped, 1) << "% of the copies dropped";
    out << "\n";
  }
  out << "  network " << s.network << ", routing " << s.routing << ", placement " << s.placement << ", collectives "
      << s.collectives << "\n\n"
      << "  iteration time   " << fixed(t, 4) << " s\n";
  if (s.sampled_layers)
    out << "                   (approximate: " << s.sampled_layers->fewer << " and " << s.sampled_layers->more
        << " layers simulated, times extrapolated to the model's; simulation.sample_layers)\n";
  out << "  throughput       " << fixed(s.tflops_per_gpu, 1) << " TFLOP/s per GPU, " << fixed(s.percent_of_peak, 1)
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
  if (s.compute_slowed_s > 0) line("  of it beside comm", s.compute_slowed_s);
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
  const schedule::MemoryVerdict v = schedule::memory_verdict(m, s.memory_capacity_bytes);
  out << "                     largest term " << v.largest << " ("
      << fixed(m.total() > 0 ? 100 * v.largest_bytes / m.total() : 0, 0) << "%); ";
  if (v.over_bytes <= 0) {
    out << fixed((s.memory_capacity_bytes - m.total()) / 1e9, 1) << " GB free\n";
  } else {
    std::string terms;
    for (const auto& term : v.over_terms) terms += (terms.empty() ? "" : ", ") + term;
    out << "over by " << fixed(v.over_bytes / 1e9, 1) << " GB; "
        << (terms.empty() ? "no single term is larger" : "larger than that: " + terms) << "\n";
  }
  out << "\n  communication of rank 0 (bytes on the wire):\n";
  for (const auto& d : s.dimensions) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "    %-6s %12s in %6llu %s\n", d.name.c_str(),
                  human_bytes(d.rank0_wire_bytes).c_str(), static_cast<unsigned long long>(d.rank0_collectives),
                  d.rank0_collectives == 1 ? "collective" : "collectives");
    out << buf;
  }
  if (s.links) print_links(out, *s.links);
  if (measured)
    out << "\n  measured on " << s.gpus << " MPI ranks with emulated GPUs (mpi backend)\n";
  else
    out << "\n  simulated " << s.events << " events and " << s.flows << " flows (" << s.backend << " backend)\n";
}

}  // namespace exasim::report
