#pragma once
// Whether a validation's measurement can judge the model: the iteration time error of each repeated
// emulation against the (deterministic) simulated time, their mean with a 95% confidence interval
// (Student's t over the repeats), and the verdict against a tolerance: inside only when the whole
// interval is, outside only when the whole interval is, otherwise undecided, with the number of
// repeats that would narrow the interval enough to decide.
//
// LIMITATIONS: the repeats are taken as independent samples of one distribution; a host whose load
// drifts during the run (a build starting next door) breaks that, and the interval is then too narrow.
// With one repeat there is no interval: the verdict is the single error's, and says so.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace exasim::validate {

struct ErrorInterval {
  double mean_pct = 0;  ///< mean over the repeats of (simulated - measured) / measured
  double low_pct = 0;   ///< 95% confidence interval of that mean
  double high_pct = 0;
  double stddev_pct = 0;  ///< sample standard deviation of the per-repeat errors (0 with one)
  std::uint32_t samples = 0;
};

/// The interval of the errors of `simulated_s` against each of `measured_runs_s`.
[[nodiscard]] ErrorInterval error_interval(const std::vector<double>& measured_runs_s, double simulated_s);
/// The same over pairs: repeat i's simulated time (from the host as probed just before it) against its
/// measured time. Host drift that moves both sides of a pair cancels in its error.
[[nodiscard]] ErrorInterval paired_error_interval(const std::vector<double>& measured_runs_s,
                                                  const std::vector<double>& simulated_runs_s);

/// CPU time of the whole host since boot, from Linux's /proc/stat "cpu" line (clock ticks): all of it,
/// and what the hypervisor gave other guests while this one had work (steal). On a virtual machine a
/// burst of steal slows an emulation where no probe or pairing sees it.
struct CpuCounters {
  double total = 0;
  double steal = 0;
  bool valid = false;  ///< false where the file is missing or has no such line (not Linux)
};
[[nodiscard]] CpuCounters read_cpu_counters(const std::string& path = "/proc/stat");
/// Percent of the host's CPU time stolen between two readings; -1 when either is invalid or none passed.
[[nodiscard]] double steal_pct(const CpuCounters& before, const CpuCounters& after);

/// Which of the runs (their stolen CPU %, in run order; -1 unknown) to keep: all of them when at most
/// `keep` ran, else the `keep` least disturbed, in run order (the earlier of equals). Unknown counts as 0.
[[nodiscard]] std::vector<std::size_t> least_disturbed(const std::vector<double>& steal_pct, std::size_t keep);

/// Runs measured until enough were left alone by the hypervisor, and which of them to keep.
struct QuietRuns {
  std::vector<double> steal_pct;  ///< per run, in run order: % of the CPU time stolen during it (-1 unknown)
  std::vector<bool> kept;         ///< per run: one of the `keep` least disturbed (least_disturbed)
};
/// Calls `run_once` (which measures once and returns the % of CPU time stolen during it) `keep` times,
/// then again, up to 2 x `keep` calls in all, while fewer than `keep` runs stayed at or under
/// `max_steal_pct`; keeps the `keep` least disturbed. The choice reads the host's counter only, never
/// what the runs measured, so it cannot favour runs that agree with the model.
[[nodiscard]] QuietRuns run_until_quiet(std::size_t keep, double max_steal_pct,
                                        const std::function<double()>& run_once);

/// Of the runs `q` kept, those a fit may pool: every kept run that lost at most `disturbed_pct` of the
/// CPU time, or every kept run when none did (`disturbed`: the reruns found no quiet hour, and what is
/// fitted describes the hypervisor as much as the host). One disturbed run among quiet ones would pull
/// the pooled fit by its slowness: on the 2-core VM a calibration run that lost 31% measured 33% less
/// bandwidth than the two beside it that lost 3%.
struct PooledRuns {
  std::vector<bool> pooled;  ///< per run, in run order, as QuietRuns::kept
  bool disturbed = false;
};
[[nodiscard]] PooledRuns runs_to_pool(const QuietRuns& q, double disturbed_pct);

/// Two-sided 95% quantile of Student's t with `df` degrees of freedom (df >= 1).
[[nodiscard]] double t95(std::uint32_t df);

enum class Verdict { within, outside, undecided };

/// Against a tolerance of +-max_error_pct: within when the interval lies inside it, outside when it
/// lies wholly beyond it, else undecided. One sample: its error alone decides.
[[nodiscard]] Verdict judge(const ErrorInterval& e, double max_error_pct);

/// The repeats (at most `limit`) after which an interval as wide per sample as `e`'s, around the same
/// mean, would decide against max_error_pct; 0 when none up to `limit` would (the mean sits on the bound).
[[nodiscard]] std::uint32_t repeats_to_decide(const ErrorInterval& e, double max_error_pct, std::uint32_t limit = 100);

}  // namespace exasim::validate
