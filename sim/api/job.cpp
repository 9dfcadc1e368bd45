#include "sim/api/job.hpp"

#include "sim/core/error.hpp"
#include "sim/job/stragglers.hpp"
#include "sim/schedule/memory.hpp"

namespace exasim::api {

JobReport run_job(const scenario::Scenario& s, const SimulateOptions& options) {
  if (!s.job)
    throw InputError(s.source, "job",
                     "missing: exasim job needs the scenario's job object ({\"steps\" or \"tokens\", \"failures\", "
                     "\"checkpoint\", ...}: docs/job.md)");
  const job::JobConfig& cfg = *s.job;
  JobReport r;
  const auto& device = s.machine.gpu_choice.device;
  r.inputs.busy_w = cfg.busy_w.value_or(device.busy_power_w.value);
  r.inputs.idle_w = cfg.idle_w.value_or(device.idle_power_w.value);
  r.busy_power_source = cfg.busy_w ? "job.power.busy_w" : device.busy_power_w.source;
  r.idle_power_source = cfg.idle_w ? "job.power.idle_w" : device.idle_power_w.source;
  if (r.inputs.idle_w > r.inputs.busy_w)
    throw InputError(s.source, cfg.idle_w ? "job.power.idle_w" : "job.power.busy_w",
                     "idle power " + std::to_string(r.inputs.idle_w) + " W exceeds the busy power " +
                         std::to_string(r.inputs.busy_w) + " W; give idle_w <= busy_w");

  r.baseline = simulate(s, options);
  const auto factors =
      job::straggler_factors(s.gpus, cfg.straggler_fraction, cfg.straggler_slowdown, cfg.straggler_seed);
  for (std::uint32_t rank = 0; rank < factors.size(); ++rank)
    if (factors[rank] != 1.0) r.straggler_ranks.push_back(rank);
  if (factors.empty()) {
    r.with_stragglers = r.baseline;
  } else {
    SimulateOptions slowed = options;
    slowed.adjust_job = [factors, adjust = options.adjust_job](scenario::PreparedJob& prepared) {
      if (adjust) adjust(prepared);
      prepared.job.rank_compute_factor = factors;
    };
    r.with_stragglers = simulate(s, slowed);
  }

  job::JobInputs& in = r.inputs;
  in.config = cfg;
  in.iteration_s = r.baseline.iteration_time_s;
  in.straggler_iteration_s = r.with_stragglers.iteration_time_s;
  in.busy_fraction = std::min(1.0, r.with_stragglers.compute_s / r.with_stragglers.iteration_time_s);
  in.gpus = s.gpus;
  in.nodes = (s.gpus + s.machine.node.gpus - 1) / s.machine.node.gpus;
  in.stragglers = static_cast<std::uint32_t>(r.straggler_ranks.size());
  in.seed = s.seed;
  // Weights and optimizer state (fp32 master weights, Adam moments) of every parameter: what a restart
  // needs; gradients are rebuilt by the next step.
  const auto bytes = schedule::param_bytes(s.training);
  in.state_bytes = s.model.parameters() * (bytes.weights + bytes.optimizer);
  r.estimate = job::estimate_job(in);
  return r;
}

}  // namespace exasim::api
