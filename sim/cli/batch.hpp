#pragma once
// Simulating many scenarios at once for `exasim tune` and `exasim sweep`: in this process (--jobs 1; a
// layer-sampled scenario then runs its shorter sample in a child, api::SimulateOptions::concurrent_samples),
// over local processes (--jobs J: fork, each child simulating every J-th scenario and writing its rows
// to a file), or over MPI ranks (--ranks N: mpirun starts N copies of `exasim batch-worker`, each reading
// OMPI_COMM_WORLD_RANK/SIZE and simulating every N-th scenario of a batch file). The launching process
// gathers the rows by index, so the result is the same whatever the split: doubles cross processes as
// JSON, whose numbers round-trip exactly. The engine stays single-threaded and MPI-free.

#include "sim/cli/command.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace exasim::cli {

/// What a batch keeps of one simulated scenario (report::Summary's figures).
struct PointResult {
  std::string error;  ///< non-empty: the scenario could not run (the InputError's message)
  double iteration_time_s = 0, percent_of_peak = 0, tflops_per_gpu = 0, model_tflops_per_gpu = 0;
  double mfu_percent = 0, total_pflops = 0, memory_per_gpu_bytes = 0;
  /// Layer sampling (simulation.sample_layers): the layer counts simulated; empty when every layer was.
  std::vector<std::uint32_t> sampled_layers;
  /// A scenario with a `job` object (docs/job.md): the run priced by api::run_job, as {time_to_train_days,
  /// goodput, energy_MWh, cost_usd, interval_s, straggler_iteration_s}; null otherwise.
  nlohmann::json job;
  [[nodiscard]] nlohmann::json to_json() const;
  [[nodiscard]] static PointResult from_json(const nlohmann::json& j);
};

struct BatchOptions {
  // Signed, so that a negative value reaches the range check (and its message) instead of CLI11's.
  std::int64_t jobs = 1;   ///< local processes
  std::int64_t ranks = 0;  ///< MPI ranks through mpirun (0: none)
  std::string hostfile;    ///< mpirun --hostfile (empty: this host)
  bool progress = false;   ///< progress on stderr: a bar on a terminal, else a line every 5 s
};

/// Checks --jobs and --ranks (InputError naming the flag).
void check_batch_options(const BatchOptions& options);

/// Where local scratch files go (--jobs workers' rows, place's candidate placements): TMPDIR when set,
/// else /tmp. TMPDIR must be an absolute path to a directory; anything else is an InputError naming it,
/// raised before any worker starts rather than inside one.
[[nodiscard]] std::filesystem::path scratch_root();

/// Declares --jobs, --ranks and --hostfile on a command.
void add_batch_flags(CLI::App& cmd, BatchOptions& options);

/// Simulates every scenario (resolved documents, as Scenario::resolved) with the fast core and the
/// memory check; rows in the order of `scenarios`. A scenario with a `job` object is run through
/// api::run_job (a second simulation when it has stragglers) and its row gets `job`.
[[nodiscard]] std::vector<PointResult> run_batch(const std::vector<nlohmann::json>& scenarios,
                                                 const BatchOptions& options, std::ostream& log);

}  // namespace exasim::cli
