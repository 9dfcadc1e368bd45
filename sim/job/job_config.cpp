#include "sim/job/job_config.hpp"

#include "sim/core/json_view.hpp"

#include <cmath>
#include <cstdio>

namespace exasim::job {

namespace {

// Bounds that keep the arithmetic finite and catch unit slips: a run of at most 10^16 tokens or 10^12
// steps, rates below one failure per GPU-second, a year of restart, 1 PB/s of storage.
constexpr double kMaxTokens = 1e16;
constexpr std::int64_t kMaxSteps = 1'000'000'000'000;
constexpr double kMaxPerGpuHour = 3600;
constexpr double kMaxSeconds = 365.0 * 24 * 3600;
constexpr double kMaxBandwidth_Bps = 1e15;
constexpr double kMaxPower_w = 1e5;

void read_length(const JsonView& v, const JobContext& c, JobConfig& j) {
  const bool tokens = v.has("tokens"), steps = v.has("steps");
  if (tokens == steps)
    v.fail(tokens ? "steps" : "tokens",
           tokens ? "give job.tokens or job.steps, not both" : "missing: give job.tokens or job.steps (exactly one)");
  if (steps) {
    j.steps = v.integer("steps", 1, kMaxSteps);
    j.tokens = static_cast<double>(j.steps) * c.tokens_per_step;
    return;
  }
  j.tokens = v.number("tokens", 0, kMaxTokens);
  // Whole steps: the last one is run in full.
  j.steps = static_cast<std::int64_t>(std::ceil(j.tokens / c.tokens_per_step));
  j.steps_from_tokens = true;
}

void read_failures(const JsonView& job, const JobContext& c, JobConfig& j) {
  const double gpu_hours_per_hour = c.gpus;
  j.failures_per_gpu_hour = kLlama3FailuresPerGpuHour;
  j.failure_rate_source = "default: Llama 3 405B, 419 unexpected interruptions in 54 days on 16,384 H100s [J1]";
  if (job.has("failures")) {
    const auto v = job.object("failures");
    v.check_keys({"per_gpu_hour", "per_node_hour", "job_mtbf_hours", "restart_s"});
    int given = 0;
    for (const char* key : {"per_gpu_hour", "per_node_hour", "job_mtbf_hours"}) given += v.has(key) ? 1 : 0;
    if (given > 1)
      v.fail("per_gpu_hour", "give at most one of per_gpu_hour, per_node_hour and job_mtbf_hours (they are one rate)");
    if (v.has("per_gpu_hour")) {
      j.failures_per_gpu_hour = v.number("per_gpu_hour", 0, kMaxPerGpuHour, /*min_exclusive=*/false);
      j.failure_rate_source = "job.failures.per_gpu_hour";
    } else if (v.has("per_node_hour")) {
      j.failures_per_gpu_hour =
          v.number("per_node_hour", 0, kMaxPerGpuHour * c.gpus_per_node, /*min_exclusive=*/false) / c.gpus_per_node;
      j.failure_rate_source = "job.failures.per_node_hour";
    } else if (v.has("job_mtbf_hours")) {
      j.failures_per_gpu_hour = 1.0 / (v.number("job_mtbf_hours", 0, 1e9) * gpu_hours_per_hour);
      j.failure_rate_source = "job.failures.job_mtbf_hours";
    }
    if (j.failures_per_gpu_hour > 0) {
      if (!v.has("restart_s"))
        v.fail("restart_s",
               "missing: the seconds from a failure to training again (rescheduling, start-up, loading the "
               "checkpoint), a number in [0, 3.15e7]");
      j.restart_s = v.number("restart_s", 0, kMaxSeconds, /*min_exclusive=*/false);
    }
  } else {
    job.fail("failures",
             "missing: give at least {\"restart_s\": seconds from a failure to training again}; the rate defaults "
             "to Llama 3 405B's 1.97e-5 per GPU-hour (docs/job.md), {\"per_gpu_hour\": 0} turns failures off");
  }
  if (j.failures_per_gpu_hour > 0) j.mtbf_s = 3600.0 / (j.failures_per_gpu_hour * gpu_hours_per_hour);
}

void read_checkpoint(const JsonView& job, JobConfig& j) {
  if (!job.has("checkpoint")) {
    if (j.failures())
      job.fail("checkpoint",
               "missing: failures are on, so checkpoints are needed: give {\"write_Bps\": aggregate storage write "
               "bandwidth in bytes/s}");
    return;
  }
  const auto v = job.object("checkpoint");
  v.check_keys({"write_Bps", "mode", "snapshot_Bps", "interval_s"});
  j.mode =
      v.choice("mode", {"sync", "overlapped"}, "sync") == "sync" ? CheckpointMode::Sync : CheckpointMode::Overlapped;
  if (v.has("interval_s")) j.interval_s = v.number("interval_s", 0, kMaxSeconds);
  if (j.failures() || j.interval_s) {
    if (!v.has("write_Bps"))
      v.fail("write_Bps",
             "missing: the aggregate storage write bandwidth in bytes/s (no machine preset carries one: "
             "docs/job.md), a number in (0, 1e15]");
  }
  if (v.has("write_Bps")) j.write_Bps = v.number("write_Bps", 0, kMaxBandwidth_Bps);
  if (j.mode == CheckpointMode::Overlapped) {
    if (!v.has("snapshot_Bps"))
      v.fail("snapshot_Bps",
             "missing: mode overlapped stalls training while each GPU copies its shard of the state off the GPU; "
             "give that copy's bandwidth per GPU in bytes/s, in (0, 1e15]");
    j.snapshot_Bps = v.number("snapshot_Bps", 0, kMaxBandwidth_Bps);
  } else if (v.has("snapshot_Bps")) {
    v.fail("snapshot_Bps", "applies to mode overlapped only (mode is sync)");
  }
}

void read_stragglers(const JsonView& job, const JobContext& c, JobConfig& j) {
  j.straggler_seed = c.seed;
  if (!job.has("stragglers")) return;
  const auto v = job.object("stragglers");
  v.check_keys({"fraction", "slowdown", "seed"});
  j.straggler_fraction = v.number_or("fraction", 0, 0, 1, /*min_exclusive=*/false);
  j.straggler_slowdown = v.number_or("slowdown", 1, 1, 100, /*min_exclusive=*/false);
  j.straggler_seed = v.unsigned_integer_or("seed", c.seed);
}

void read_power(const JsonView& job, JobConfig& j) {
  if (job.has("power")) {
    const auto v = job.object("power");
    v.check_keys({"busy_w", "idle_w", "node_w"});
    if (v.has("busy_w")) j.busy_w = v.number("busy_w", 0, kMaxPower_w);
    if (v.has("idle_w")) j.idle_w = v.number("idle_w", 0, kMaxPower_w, /*min_exclusive=*/false);
    j.node_w = v.number_or("node_w", 0, 0, kMaxPower_w, /*min_exclusive=*/false);
  }
  j.pue = job.number_or("pue", 1, 1, 10, /*min_exclusive=*/false);
  j.cost_per_gpu_hour = job.number_or("cost_per_gpu_hour", 0, 0, 1e6, /*min_exclusive=*/false);
}

}  // namespace

JobConfig load_job_config(const JsonView& v, const JobContext& c) {
  v.check_keys(
      {"tokens", "steps", "failures", "checkpoint", "stragglers", "power", "pue", "cost_per_gpu_hour", "sources"});
  JobConfig j;
  j.source = v.source();
  read_length(v, c, j);
  read_failures(v, c, j);
  read_checkpoint(v, j);
  read_stragglers(v, c, j);
  read_power(v, j);
  return j;
}

}  // namespace exasim::job
