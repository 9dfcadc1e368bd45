#include "validate/noise.hpp"

#include "validate/compare.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <sstream>

namespace exasim::validate {

std::vector<std::size_t> least_disturbed(const std::vector<double>& steal_pct, std::size_t keep) {
  std::vector<std::size_t> order(steal_pct.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto stolen = [&](std::size_t i) { return std::max(0.0, steal_pct[i]); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return stolen(a) < stolen(b); });
  if (order.size() > keep) order.resize(keep);
  std::sort(order.begin(), order.end());
  return order;
}

QuietRuns run_until_quiet(std::size_t keep, double max_steal_pct, const std::function<double()>& run_once) {
  QuietRuns q;
  std::size_t quiet = 0;
  while (q.steal_pct.size() < keep || (quiet < keep && q.steal_pct.size() < 2 * keep)) {
    const double pct = run_once();
    q.steal_pct.push_back(pct);
    if (pct <= max_steal_pct) ++quiet;
  }
  q.kept.assign(q.steal_pct.size(), false);
  for (const std::size_t i : least_disturbed(q.steal_pct, keep)) q.kept[i] = true;
  return q;
}

PooledRuns runs_to_pool(const QuietRuns& q, double disturbed_pct) {
  PooledRuns p{q.kept, false};
  for (std::size_t i = 0; i < p.pooled.size(); ++i)
    if (q.steal_pct[i] > disturbed_pct) p.pooled[i] = false;
  if (std::find(p.pooled.begin(), p.pooled.end(), true) != p.pooled.end()) return p;
  return {q.kept, true};
}

double t95(std::uint32_t df) {
  // Two-sided 95% (upper 0.975) quantiles of Student's t, df 1-30 (any statistics table, e.g. NIST/
  // SEMATECH e-Handbook 1.3.6.7.2); above 30 the normal's 1.960 is within 2%.
  static constexpr std::array<double, 30> kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
      2.120,  2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return 0;
  return df <= kTable.size() ? kTable[df - 1] : 1.960;
}

ErrorInterval error_interval(const std::vector<double>& measured_runs_s, double simulated_s) {
  return paired_error_interval(measured_runs_s, std::vector<double>(measured_runs_s.size(), simulated_s));
}

ErrorInterval paired_error_interval(const std::vector<double>& measured_runs_s,
                                    const std::vector<double>& simulated_runs_s) {
  ErrorInterval e;
  const std::size_t n = std::min(measured_runs_s.size(), simulated_runs_s.size());
  e.samples = static_cast<std::uint32_t>(n);
  if (n == 0) return e;
  std::vector<double> errors;
  for (std::size_t i = 0; i < n; ++i) errors.push_back(error_pct(measured_runs_s[i], simulated_runs_s[i]));
  double sum = 0;
  for (const double x : errors) sum += x;
  e.mean_pct = sum / static_cast<double>(errors.size());
  e.low_pct = e.high_pct = e.mean_pct;
  if (errors.size() < 2) return e;
  double squares = 0;
  for (const double x : errors) squares += (x - e.mean_pct) * (x - e.mean_pct);
  e.stddev_pct = std::sqrt(squares / static_cast<double>(errors.size() - 1));
  const double half = t95(e.samples - 1) * e.stddev_pct / std::sqrt(static_cast<double>(e.samples));
  e.low_pct = e.mean_pct - half;
  e.high_pct = e.mean_pct + half;
  return e;
}

Verdict judge(const ErrorInterval& e, double max_error_pct) {
  if (e.low_pct >= -max_error_pct && e.high_pct <= max_error_pct) return Verdict::within;
  if (e.low_pct > max_error_pct || e.high_pct < -max_error_pct) return Verdict::outside;
  return Verdict::undecided;
}

std::uint32_t repeats_to_decide(const ErrorInterval& e, double max_error_pct, std::uint32_t limit) {
  // The half-width the interval may have: the mean's distance to the nearer bound.
  const double room = std::min(std::abs(max_error_pct - e.mean_pct), std::abs(-max_error_pct - e.mean_pct));
  for (std::uint32_t n = std::max<std::uint32_t>(2, e.samples); n <= limit; ++n)
    if (t95(n - 1) * e.stddev_pct / std::sqrt(static_cast<double>(n)) < room) return n;
  return 0;
}

CpuCounters read_cpu_counters(const std::string& path) {
  CpuCounters c;
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) return c;
  std::istringstream in(line);
  std::string label;
  in >> label;
  if (label != "cpu") return c;
  // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user and nice)
  double ticks[8] = {};
  int read = 0;
  while (read < 8 && in >> ticks[read]) ++read;
  if (read < 8) return c;
  for (double t : ticks) c.total += t;
  c.steal = ticks[7];
  c.valid = true;
  return c;
}

double steal_pct(const CpuCounters& before, const CpuCounters& after) {
  const double total = after.total - before.total;
  if (!before.valid || !after.valid || !(total > 0)) return -1;
  return 100 * std::max(0.0, after.steal - before.steal) / total;
}

}  // namespace exasim::validate
