#include "sim/job/failure_sim.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace exasim::job {

namespace {

/// SplitMix64 (Steele, Lea, Flood 2014): a small, well-mixed generator whose stream is fixed by its seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1]: never 0, so that -log is finite.
  double unit() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

struct Trial {
  double elapsed_s = 0;
  std::uint32_t failures = 0;
};

Trial one_trial(double work_s, double tau, double c, double r, double m, SplitMix64& rng) {
  auto gap = [&] { return -m * std::log(rng.unit()); };
  Trial trial;
  double t = 0, done = 0;
  double next_failure = gap();
  const double period = tau + c;
  while (done < work_s) {
    const double left = work_s - done;
    // Intervals that end in a checkpoint (all but the last) and complete before the next failure: at once.
    const double with_checkpoint = std::ceil(left / tau) - 1;
    const double k = std::min(with_checkpoint, std::floor((next_failure - t) / period));
    if (k > 0) {
      t += k * period;
      done += k * tau;
      continue;
    }
    // The next interval: the last one ends without a checkpoint.
    const double segment = std::min(tau, left);
    const double need = segment + (done + segment < work_s ? c : 0);
    if (t + need <= next_failure) {
      t += need;
      done += segment;
      continue;
    }
    // A failure: the interval in progress is lost; restart, and again if it fails while restarting.
    t = next_failure;
    ++trial.failures;
    for (;;) {
      next_failure = t + gap();
      if (t + r <= next_failure) {
        t += r;
        break;
      }
      t = next_failure;
      ++trial.failures;
    }
  }
  trial.elapsed_s = t;
  return trial;
}

}  // namespace

SimulatedRun simulate_run(double work_s, double interval_s, double checkpoint_s, double restart_s, double mtbf_s,
                          std::uint32_t trials, std::uint64_t seed) {
  if (!(work_s > 0) || !(interval_s > 0) || !(mtbf_s > 0) || trials == 0 || checkpoint_s < 0 || restart_s < 0)
    throw std::invalid_argument("simulate_run: work, interval, MTBF and trials must be positive");
  SplitMix64 rng(seed);
  double sum = 0, squares = 0, failures = 0;
  for (std::uint32_t i = 0; i < trials; ++i) {
    const Trial trial = one_trial(work_s, interval_s, checkpoint_s, restart_s, mtbf_s, rng);
    sum += trial.elapsed_s;
    squares += trial.elapsed_s * trial.elapsed_s;
    failures += trial.failures;
  }
  SimulatedRun run;
  run.trials = trials;
  const double n = trials;
  run.mean_elapsed_s = sum / n;
  const double variance = trials > 1 ? std::max(0.0, (squares - sum * sum / n) / (n - 1)) : 0.0;
  run.stderr_elapsed_s = std::sqrt(variance / n);
  run.goodput = std::min(1.0, work_s / run.mean_elapsed_s);  // rounding of the skipped intervals: never above 1
  run.mean_failures = failures / n;
  return run;
}

SimulatedOptimum simulated_optimum(double work_s, const std::vector<double>& candidates_s, double checkpoint_s,
                                   double restart_s, double mtbf_s, std::uint32_t trials, std::uint64_t seed) {
  SimulatedOptimum best;
  for (const double tau : candidates_s) {
    const SimulatedRun run = simulate_run(work_s, tau, checkpoint_s, restart_s, mtbf_s, trials, seed);
    if (best.run.trials == 0 || run.goodput > best.run.goodput) {
      best.interval_s = tau;
      best.run = run;
    }
    best.runs.push_back(run);
  }
  return best;
}

}  // namespace exasim::job
