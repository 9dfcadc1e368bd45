#include "sim/job/job_model.hpp"

#include "sim/job/failure_sim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace exasim::job {

double young_interval_s(double checkpoint_s, double mtbf_s) { return std::sqrt(2 * checkpoint_s * mtbf_s); }

double daly_interval_s(double checkpoint_s, double mtbf_s) {
  const double c = checkpoint_s, m = mtbf_s;
  if (c >= 2 * m) return m;
  return std::sqrt(2 * c * m) * (1 + std::sqrt(c / (2 * m)) / 3 + c / (18 * m)) - c;
}

double expected_time_s(double work_s, double interval_s, double checkpoint_s, double restart_s, double mtbf_s) {
  if (!(mtbf_s > 0)) return work_s * (1 + checkpoint_s / interval_s);
  const double m = mtbf_s;
  // expm1 keeps the precision where (tau + C) << M, the common case.
  return m * std::exp(restart_s / m) * std::expm1((interval_s + checkpoint_s) / m) * work_s / interval_s;
}

double goodput(double interval_s, double checkpoint_s, double restart_s, double mtbf_s) {
  return 1.0 / expected_time_s(1.0, interval_s, checkpoint_s, restart_s, mtbf_s);
}

double optimum_interval_s(double checkpoint_s, double restart_s, double mtbf_s, double lower_s, double upper_s) {
  if (!(upper_s > lower_s)) return lower_s;
  const auto g = [&](double log_tau) { return goodput(std::exp(log_tau), checkpoint_s, restart_s, mtbf_s); };
  // Goodput is unimodal in tau (rising while the checkpoint cost dominates, falling once lost work does);
  // the grid finds its hump, the golden-section search its top.
  constexpr int kGrid = 400;
  const double a = std::log(lower_s), b = std::log(upper_s);
  int best = 0;
  double best_g = -1;
  for (int i = 0; i <= kGrid; ++i) {
    const double x = a + (b - a) * i / kGrid;
    if (const double v = g(x); v > best_g) best_g = v, best = i;
  }
  double lo = a + (b - a) * std::max(0, best - 1) / kGrid, hi = a + (b - a) * std::min(kGrid, best + 1) / kGrid;
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
  double g1 = g(x1), g2 = g(x2);
  for (int it = 0; it < 100; ++it) {
    if (g1 < g2) {
      lo = x1, x1 = x2, g1 = g2, x2 = lo + phi * (hi - lo), g2 = g(x2);
    } else {
      hi = x2, x2 = x1, g2 = g1, x1 = hi - phi * (hi - lo), g1 = g(x1);
    }
  }
  return std::exp((lo + hi) / 2);
}

namespace {

/// The whole-step interval nearest the continuous optimum with the better goodput.
double whole_steps(double tau_s, double step_s, double lower_s, double c, double r, double m) {
  const double k = std::max(1.0, std::floor(tau_s / step_s));
  double best = k * step_s;
  if (best < lower_s) best = std::ceil(lower_s / step_s) * step_s;
  const double up = (std::floor(best / step_s) + 1) * step_s;
  return goodput(up, c, r, m) > goodput(best, c, r, m) ? up : best;
}

/// The failure simulation over the curve's intervals and Young's, Daly's and the searched one, all with
/// the same seeds; and at the interval used.
void simulate_failures(const JobInputs& in, JobEstimate& e) {
  const double work = static_cast<double>(in.config.steps) * in.straggler_iteration_s;
  const double c = e.checkpoint_stall_s, r = e.restart_s, m = e.mtbf_s;
  std::vector<double> candidates;
  for (const auto& [tau, g] : e.goodput_curve) candidates.push_back(tau);
  for (const double tau : {e.young_s, e.daly_s, e.optimum_s}) candidates.push_back(std::max(tau, e.lower_interval_s));
  candidates.push_back(e.interval_s);  // the curve's centre already
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  // One simulation per candidate: the curve's points and the interval used are read back from the runs.
  const auto best = simulated_optimum(work, candidates, c, r, m, kFailureTrials, in.seed);
  const auto run_at = [&](double tau) -> const SimulatedRun& {
    return best.runs[static_cast<std::size_t>(std::lower_bound(candidates.begin(), candidates.end(), tau) -
                                              candidates.begin())];
  };
  e.simulated_optimum_s = best.interval_s;
  e.simulated_optimum_goodput = best.run.goodput;
  e.simulated_optimum_stderr = best.run.goodput * best.run.stderr_elapsed_s / best.run.mean_elapsed_s;
  e.simulated_trials = kFailureTrials;
  for (const auto& [tau, g] : e.goodput_curve) e.simulated_curve.emplace_back(tau, run_at(tau).goodput);
  const auto& used = run_at(e.interval_s);
  e.simulated_goodput = used.goodput;
  e.simulated_failures = used.mean_failures;
}

struct Effects {
  bool failures, checkpoints, stragglers;
};

}  // namespace

JobEstimate estimate_job(const JobInputs& in) {
  const JobConfig& cfg = in.config;
  JobEstimate e;
  e.mtbf_s = cfg.mtbf_s;
  e.checkpoints = cfg.failures() || cfg.interval_s.has_value();
  e.checkpoint_write_s = cfg.write_Bps > 0 ? in.state_bytes / cfg.write_Bps : 0;
  e.restart_s = cfg.restart_s;
  e.lower_interval_s = in.straggler_iteration_s;
  if (cfg.mode == CheckpointMode::Sync) {
    e.checkpoint_stall_s = e.checkpoint_write_s;
  } else {
    e.checkpoint_stall_s = in.state_bytes / in.gpus / cfg.snapshot_Bps;
    e.restart_s += e.checkpoint_write_s;  // the write's lag: work since the last completed checkpoint
    e.lower_interval_s = std::max(e.lower_interval_s, e.checkpoint_write_s);
  }
  const double c = e.checkpoint_stall_s, r = e.restart_s, m = e.mtbf_s, step = in.straggler_iteration_s;
  if (cfg.failures()) {
    e.young_s = young_interval_s(c, m);
    e.daly_s = daly_interval_s(c, m);
    const double upper = std::max(10 * m, 2 * e.lower_interval_s);
    e.optimum_s =
        whole_steps(optimum_interval_s(c, r, m, e.lower_interval_s, upper), step, e.lower_interval_s, c, r, m);
    e.young_goodput = goodput(std::max(e.young_s, e.lower_interval_s), c, r, m);
    e.daly_goodput = goodput(std::max(e.daly_s, e.lower_interval_s), c, r, m);
    e.optimum_goodput = goodput(e.optimum_s, c, r, m);
  }
  e.interval_given = cfg.interval_s.has_value();
  e.interval_s = e.interval_given ? std::max(*cfg.interval_s, e.lower_interval_s) : e.optimum_s;
  if (e.checkpoints) {
    const double centre = e.interval_s > 0 ? e.interval_s : e.lower_interval_s;
    constexpr int kPoints = 17;  // a factor of 16 each side, 2 points per factor of 2: labels a chart can show
    for (int i = 0; i < kPoints; ++i) {
      const double tau = centre * std::pow(2.0, (i - (kPoints - 1) / 2) / 2.0);
      if (tau < e.lower_interval_s) continue;
      e.goodput_curve.emplace_back(tau, goodput(tau, c, r, m));
    }
  }

  if (cfg.failures() && e.checkpoints) simulate_failures(in, e);

  const double f = in.busy_fraction;
  e.train_power_w = f * in.busy_w + (1 - f) * in.idle_w;
  const auto outcome = [&](const char* name, Effects fx) {
    Outcome o;
    o.name = name;
    const double work = static_cast<double>(cfg.steps) * (fx.stragglers ? in.straggler_iteration_s : in.iteration_s);
    const double mtbf = fx.failures ? m : 0;
    const double stall = fx.checkpoints ? c : 0;
    const double restart = fx.failures ? (fx.checkpoints ? r : cfg.restart_s) : 0;
    // Without failures, checkpoints are still taken at the interval; free checkpoints are continuous
    // (tau -> 0: T = W e^{R/M}).
    o.interval_s = fx.checkpoints && e.checkpoints ? e.interval_s : 0;
    if (o.interval_s > 0) {
      o.elapsed_s = expected_time_s(work, o.interval_s, stall, restart, mtbf);
    } else {
      o.elapsed_s = mtbf > 0 ? work * std::exp(restart / mtbf) : work;
    }
    o.goodput = work / o.elapsed_s;
    // Elapsed time split: checkpoint stalls and restarts at idle power, the rest (work and re-done work)
    // at training power.
    const double stalls = o.interval_s > 0 ? work / o.interval_s * stall : 0;
    const double restarts = mtbf > 0 ? o.elapsed_s / mtbf * restart : 0;
    const double training = std::max(0.0, o.elapsed_s - stalls - restarts);
    const double gpu_J = in.gpus * (e.train_power_w * training + in.idle_w * (stalls + restarts));
    o.energy_J = cfg.pue * (gpu_J + in.nodes * cfg.node_w * o.elapsed_s);
    o.cost_usd = in.gpus * o.elapsed_s / 3600 * cfg.cost_per_gpu_hour;
    return o;
  };
  e.what_if.push_back(outcome("with everything", {true, true, true}));
  e.what_if.push_back(outcome("no failures", {false, true, true}));
  e.what_if.push_back(outcome("free checkpoints", {true, false, true}));
  e.what_if.push_back(outcome("no stragglers", {true, true, false}));
  e.what_if.push_back(outcome("ideal (none of them)", {false, false, false}));
  return e;
}

}  // namespace exasim::job
