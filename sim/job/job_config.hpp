#pragma once
// The scenario's optional `job` object: the whole training run around one iteration, for `exasim job`
// (docs/job.md). Read and validated here; the arithmetic is in job_model.hpp, the straggler simulation in
// sim/api/job.hpp.
//
//   "job": {
//     "tokens": 15.6e12 | "steps": 1200000,            exactly one
//     "failures": {"per_gpu_hour": 1.97e-5 | "per_node_hour": ... | "job_mtbf_hours": ...,  at most one;
//                  "restart_s": 1800},                  default rate: Llama 3 405B's (kLlama3FailuresPerGpuHour)
//     "checkpoint": {"write_Bps": 1e12, "mode": "sync" | "overlapped", "snapshot_Bps": 50e9, "interval_s": 3600},
//     "stragglers": {"fraction": 0.001, "slowdown": 1.5, "seed": 1},
//     "power": {"busy_w": 700, "idle_w": 70, "node_w": 0},
//     "pue": 1.0,
//     "cost_per_gpu_hour": 2.0
//   }
//
// Every number is range-checked; a bad one is an InputError naming the file, the field and what is allowed.
//
// LIMITATIONS: one failure rate for every GPU, constant over the run (no infant mortality or wear-out);
// the checkpoint write bandwidth is one aggregate figure (no contention with other jobs, no per-node
// cap); the straggler set is fixed for the whole run.

#include <cstdint>
#include <optional>
#include <string>

namespace exasim {
class JsonView;
}

namespace exasim::job {

/// Llama 3 405B's pre-training (Meta, "The Llama 3 Herd of Models", 2024, section 3.3.4, [J1] in
/// docs/sources.md): 419 unexpected interruptions in 54 days on 16,384 H100 GPUs: 419 / (16,384 x 54 x 24)
/// failures per GPU-hour.
inline constexpr double kLlama3FailuresPerGpuHour = 419.0 / (16384.0 * 54.0 * 24.0);

enum class CheckpointMode {
  Sync,        ///< training stalls while the state is written to storage
  Overlapped,  ///< training stalls only while the state is copied off the GPU; the write runs beside it
};

struct JobConfig {
  std::string source;      ///< the scenario file, for errors raised later
  std::int64_t steps = 0;  ///< optimizer steps to train (from job.steps, or job.tokens / tokens per step)
  double tokens = 0;       ///< tokens to train: steps x tokens per step
  bool steps_from_tokens = false;

  // Failures: the whole job's mean time between failures, in seconds (0: no failures).
  double mtbf_s = 0;
  double failures_per_gpu_hour = 0;
  std::string failure_rate_source;  ///< which key gave the rate, or the default's source
  double restart_s = 0;             ///< from the failure to training again: rescheduling, start-up, loading

  // Checkpoints.
  double write_Bps = 0;  ///< aggregate storage write bandwidth (0: not given)
  CheckpointMode mode = CheckpointMode::Sync;
  double snapshot_Bps = 0;           ///< per GPU, device to host copy of its shard of the state (overlapped mode)
  std::optional<double> interval_s;  ///< as given; else the optimum

  // Stragglers.
  double straggler_fraction = 0;
  double straggler_slowdown = 1;
  std::uint64_t straggler_seed = 1;

  // Power and price.
  std::optional<double> busy_w, idle_w;  ///< overrides of the GPU device's figures
  double node_w = 0;                     ///< per node, beside its GPUs (CPUs, NICs, fans)
  double pue = 1;
  double cost_per_gpu_hour = 0;  ///< USD; 0: no cost reported

  [[nodiscard]] bool failures() const { return mtbf_s > 0; }
};

/// What the loader needs to know of the scenario around the job object.
struct JobContext {
  std::uint32_t gpus = 0;
  std::uint32_t gpus_per_node = 1;
  double tokens_per_step = 0;  ///< global batch x sequence length
  std::uint64_t seed = 1;      ///< the scenario's: the stragglers' default seed
};

/// Reads `view` (the `job` object). InputError on an unknown key, a value out of range, both or neither
/// of tokens and steps, two failure rates, or a checkpoint without the bandwidth it needs.
[[nodiscard]] JobConfig load_job_config(const JsonView& view, const JobContext& context);

}  // namespace exasim::job
