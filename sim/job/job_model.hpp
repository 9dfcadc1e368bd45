#pragma once
// The whole training run from one simulated iteration: expected time to train with failures, restarts
// and checkpoints, the checkpoint interval (Young's and Daly's closed forms, and the optimum of Daly's
// expected-time model found by search), goodput, energy and cost (docs/job.md has the formulas).
//
// Expected wall time (Daly 2006, "A higher order estimate of the optimum checkpoint interval for restart
// dumps", Future Generation Computer Systems 22(3); [J2] in docs/sources.md), for W seconds of work cut into intervals
// of tau seconds each followed by a checkpoint stall of C, failures arriving as a Poisson process of mean M, and R
// seconds from a failure to working again:
//   T(tau) = M e^{R/M} (e^{(tau + C)/M} - 1) W / tau
// Goodput is W / T. Young (1974, [J3]): tau = sqrt(2 C M). Daly's higher-order estimate:
//   tau = sqrt(2 C M) (1 + sqrt(C / (2M)) / 3 + C / (18 M)) - C   for C < 2M, else M.
//
// LIMITATIONS:
//  - failures are memoryless and independent, one rate for the whole job; a failure during a checkpoint
//    or a restart is handled as Daly's model does (the interval is lost, the restart starts over);
//  - an overlapped checkpoint completes its write `write_s` after its snapshot: a failure then loses that
//    much more work, charged as extra restart time (R + write_s), an approximation of the lag;
//  - the energy of a checkpoint stall and of a restart is that of idle GPUs, the re-done work is charged
//    at the training power; storage, network switches and cooling other than through the PUE are left out;
//  - the busy fraction is compute time over iteration time from the simulation: a GPU waiting on
//    communication is charged its idle power, though its communication kernels draw more.

#include "sim/job/job_config.hpp"

#include <cstdint>

#include <string>
#include <utility>
#include <vector>

namespace exasim::job {

/// Young's first-order optimum interval: sqrt(2 C M).
[[nodiscard]] double young_interval_s(double checkpoint_s, double mtbf_s);
/// Daly's higher-order optimum interval (header); M when C >= 2M.
[[nodiscard]] double daly_interval_s(double checkpoint_s, double mtbf_s);
/// Daly's expected wall time T(tau) for `work_s` (header); mtbf_s = 0 means no failures: W (1 + C/tau).
[[nodiscard]] double expected_time_s(double work_s, double interval_s, double checkpoint_s, double restart_s,
                                     double mtbf_s);
/// W / T(tau): independent of W.
[[nodiscard]] double goodput(double interval_s, double checkpoint_s, double restart_s, double mtbf_s);
/// The tau in [lower_s, upper_s] that maximises goodput: a log-spaced grid, then golden-section search
/// between the best point's neighbours. Deterministic.
[[nodiscard]] double optimum_interval_s(double checkpoint_s, double restart_s, double mtbf_s, double lower_s,
                                        double upper_s);

/// What the simulations and the scenario give the job model.
struct JobInputs {
  JobConfig config;
  double iteration_s = 0;            ///< simulated, every GPU at full speed
  double straggler_iteration_s = 0;  ///< simulated with the stragglers slowed (= iteration_s without any)
  double busy_fraction = 0;          ///< mean compute time per GPU over the iteration (straggler run)
  std::uint32_t gpus = 0, nodes = 0;
  std::uint32_t stragglers = 0;  ///< GPUs slowed
  double state_bytes = 0;        ///< checkpointed state of the whole model: weights + optimizer state
  double busy_w = 0, idle_w = 0;
  std::uint64_t seed = 1;  ///< the failure simulation's (the scenario's seed)
};

/// Trials of the failure simulation behind the simulated optimum (failure_sim.hpp): at the Llama 3 rate on
/// 16,384 GPUs a trial of the 114-day run meets about 900 failures, and 200 trials put the standard error
/// of its mean time near 0.02%.
inline constexpr std::uint32_t kFailureTrials = 200;

/// One line of the what-if table.
struct Outcome {
  std::string name;
  double elapsed_s = 0;
  double goodput = 1;     ///< work / elapsed
  double interval_s = 0;  ///< checkpoint interval used (0: none)
  double energy_J = 0;
  double cost_usd = 0;
};

struct JobEstimate {
  double checkpoint_stall_s = 0;                  ///< C: what one checkpoint stalls training
  double checkpoint_write_s = 0;                  ///< state / write bandwidth
  double restart_s = 0;                           ///< R as the model uses it (the overlapped write's lag included)
  double mtbf_s = 0;                              ///< 0: no failures
  double lower_interval_s = 0;                    ///< the shortest interval allowed: one step, or the overlapped write
  bool checkpoints = false;                       ///< whether checkpoints are taken at all
  double young_s = 0, daly_s = 0, optimum_s = 0;  ///< optimum_s: a whole number of steps
  double young_goodput = 0, daly_goodput = 0, optimum_goodput = 0;
  /// The failure simulation (failure_sim.hpp) over the curve's intervals and the three above: the best of
  /// them, its simulated goodput and standard error, and the simulated goodput at the interval used.
  double simulated_optimum_s = 0, simulated_optimum_goodput = 0, simulated_optimum_stderr = 0;
  double simulated_goodput = 0, simulated_failures = 0;
  std::uint32_t simulated_trials = 0;
  std::vector<std::pair<double, double>> simulated_curve;  ///< (interval_s, simulated goodput)
  double interval_s = 0;                                   ///< used: job.checkpoint.interval_s, else optimum_s
  bool interval_given = false;
  double train_power_w = 0;  ///< per GPU while training steps run
  /// Goodput over the checkpoint interval around the optimum (interval_s, goodput), for the report.
  std::vector<std::pair<double, double>> goodput_curve;
  /// what_if[0] is the run with everything; then without failures, with free checkpoints, without
  /// stragglers, and the ideal (none of them).
  std::vector<Outcome> what_if;
};

[[nodiscard]] JobEstimate estimate_job(const JobInputs& in);

}  // namespace exasim::job
