#pragma once
// The training run's timeline with failures drawn at random, run many times: the expected wall time and
// goodput of a checkpoint interval measured by simulation rather than by Daly's closed form, and the
// interval that does best among candidates (the "simulated optimum" beside Young's and Daly's).
//
// One trial: the work W is cut into intervals of tau; each interval is followed by a checkpoint stall
// of C (none after the last); failures arrive as a Poisson process of mean M (exponential gaps from a
// seeded SplitMix64). A failure loses the work since the last completed checkpoint (and the checkpoint
// in progress) and costs R to restart; a failure during a restart starts the restart over. The trial
// ends when W is done. Intervals between failures are skipped in one step (the trial costs O(failures),
// not O(intervals)). All candidates use the same seeds (common random numbers), so their comparison is
// not blurred by independent noise.
//
// LIMITATIONS:
//  - the same failure model as Daly's (memoryless, one rate, restart and checkpoint at fixed cost), so
//    it checks the closed form's algebra and approximation, not its assumptions;
//  - the mean over `trials` has a standard error (returned); candidates whose goodputs differ by less
//    than it are not told apart reliably.

#include <cstdint>
#include <vector>

namespace exasim::job {

struct SimulatedRun {
  double mean_elapsed_s = 0;
  double stderr_elapsed_s = 0;  ///< standard error of the mean over the trials
  double goodput = 0;           ///< work / mean_elapsed_s
  double mean_failures = 0;
  std::uint32_t trials = 0;
};

/// `trials` runs of `work_s` at checkpoint interval `interval_s` (> 0), stall `checkpoint_s`, restart
/// `restart_s`, mean time between failures `mtbf_s` (> 0). Deterministic for a seed.
[[nodiscard]] SimulatedRun simulate_run(double work_s, double interval_s, double checkpoint_s, double restart_s,
                                        double mtbf_s, std::uint32_t trials, std::uint64_t seed);

struct SimulatedOptimum {
  double interval_s = 0;
  SimulatedRun run;
  std::vector<SimulatedRun> runs;  ///< every candidate's, in the candidates' order
};

/// The candidate interval with the best simulated goodput (the first on ties), and every candidate's run.
[[nodiscard]] SimulatedOptimum simulated_optimum(double work_s, const std::vector<double>& candidates_s,
                                                 double checkpoint_s, double restart_s, double mtbf_s,
                                                 std::uint32_t trials, std::uint64_t seed);

}  // namespace exasim::job
