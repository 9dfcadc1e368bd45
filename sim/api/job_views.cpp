// The text and JSON views of a JobReport (job.hpp).

#include "sim/api/job.hpp"

#include "sim/core/text_format.hpp"

#include <cstdio>
#include <ostream>

namespace exasim::api {

namespace {

constexpr double kDay_s = 86400;

std::string job_bytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000 && u < 5) b /= 1000, ++u;
  return fixed(b, u == 0 ? 0 : 2) + " " + units[u];
}

std::string mode_name(job::CheckpointMode mode) { return mode == job::CheckpointMode::Sync ? "sync" : "overlapped"; }

void print_interval_line(std::ostream& out, const char* name, double interval_s, double goodput, double step_s) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "    %-22s %10.0f s  %8.1f steps  goodput %.4f\n", name, interval_s,
                interval_s / step_s, goodput);
  out << buf;
}

}  // namespace

void print_job(std::ostream& out, const JobReport& r) {
  const auto& s = r.baseline;
  const auto& in = r.inputs;
  const auto& cfg = in.config;
  const auto& e = r.estimate;
  char buf[400];
  out << "exasim job: " << s.scenario << "\n";
  std::snprintf(buf, sizeof buf, "  %s on %u x %s (%s), %s, global batch %lld\n", s.model.c_str(), s.gpus,
                s.gpu.c_str(), s.machine.c_str(), s.scheme.c_str(), static_cast<long long>(s.global_batch));
  out << buf;
  std::snprintf(buf, sizeof buf, "  run            %lld steps, %.4g tokens%s\n", static_cast<long long>(cfg.steps),
                cfg.tokens, cfg.steps_from_tokens ? " (job.tokens, rounded up to whole steps)" : "");
  out << buf;
  std::snprintf(buf, sizeof buf, "  iteration      %.4f s simulated", in.iteration_s);
  out << buf;
  if (in.stragglers > 0) {
    std::snprintf(buf, sizeof buf, "; %.4f s with %u straggling GPUs (%.2fx slower compute, seed %llu)",
                  in.straggler_iteration_s, in.stragglers, cfg.straggler_slowdown,
                  static_cast<unsigned long long>(cfg.straggler_seed));
    out << buf;
  }
  out << "\n";
  if (s.sampled_layers) out << "                 (approximate: layer sampling, simulation.sample_layers)\n";
  if (cfg.failures()) {
    std::snprintf(buf, sizeof buf, "  failures       %.3g per GPU-hour (%s): job MTBF %.2f h; restart %.0f s\n",
                  cfg.failures_per_gpu_hour, cfg.failure_rate_source.c_str(), e.mtbf_s / 3600, cfg.restart_s);
    out << buf;
  } else {
    out << "  failures       none\n";
  }
  if (e.checkpoints) {
    std::snprintf(buf, sizeof buf,
                  "  checkpoint     %s of weights and optimizer state, %s: written in %.1f s, training stalls %.1f s\n",
                  job_bytes(in.state_bytes).c_str(), mode_name(cfg.mode).c_str(), e.checkpoint_write_s,
                  e.checkpoint_stall_s);
    out << buf;
  } else {
    out << "  checkpoint     none (no failures and no job.checkpoint.interval_s)\n";
  }
  if (cfg.failures()) {
    out << "  checkpoint interval (Daly's expected-time model):\n";
    const double step = in.straggler_iteration_s;
    print_interval_line(out, "Young sqrt(2CM)", e.young_s, e.young_goodput, step);
    print_interval_line(out, "Daly higher-order", e.daly_s, e.daly_goodput, step);
    print_interval_line(out, "optimum (searched)", e.optimum_s, e.optimum_goodput, step);
    if (e.interval_given) print_interval_line(out, "used (interval_s)", e.interval_s, e.what_if[0].goodput, step);
    if (e.simulated_trials > 0) {
      std::snprintf(buf, sizeof buf,
                    "    %-22s %10.0f s  %8.1f steps  goodput %.4f +- %.4f (%u simulated runs of the job)\n",
                    "optimum (simulated)", e.simulated_optimum_s, e.simulated_optimum_s / step,
                    e.simulated_optimum_goodput, e.simulated_optimum_stderr, e.simulated_trials);
      out << buf;
      std::snprintf(buf, sizeof buf,
                    "    at the interval used, the simulated runs give goodput %.4f (the model %.4f), %.0f failures "
                    "a run\n",
                    e.simulated_goodput, e.what_if[0].goodput, e.simulated_failures);
      out << buf;
    }
  }
  const auto& all = e.what_if.front();
  out << "\n";
  std::snprintf(buf, sizeof buf, "  time to train  %.2f days (%.1f h)\n", all.elapsed_s / kDay_s, all.elapsed_s / 3600);
  out << buf;
  std::snprintf(buf, sizeof buf, "  goodput        %.4f (steps' time over elapsed time)\n", all.goodput);
  out << buf;
  std::snprintf(buf, sizeof buf,
                "  energy         %.1f MWh (%.0f W per GPU training, busy %.1f%% of the step; PUE %.2f)\n",
                all.energy_J / 3.6e9, e.train_power_w, 100 * in.busy_fraction, cfg.pue);
  out << buf;
  if (cfg.cost_per_gpu_hour > 0) {
    std::snprintf(buf, sizeof buf, "  cost           %.0f USD at %.2f USD per GPU-hour\n", all.cost_usd,
                  cfg.cost_per_gpu_hour);
    out << buf;
  }
  out << "\n  what-if                 time (days)   goodput   energy (MWh)   cost (USD)\n";
  for (const auto& o : e.what_if) {
    std::snprintf(buf, sizeof buf, "    %-22s %11.2f %9.4f %14.1f %12.0f\n", o.name.c_str(), o.elapsed_s / kDay_s,
                  o.goodput, o.energy_J / 3.6e9, o.cost_usd);
    out << buf;
  }
}

nlohmann::json to_json(const JobReport& r) {
  const auto& in = r.inputs;
  const auto& cfg = in.config;
  const auto& e = r.estimate;
  nlohmann::json what_if = nlohmann::json::array();
  for (const auto& o : e.what_if)
    what_if.push_back({{"name", o.name},
                       {"elapsed_s", o.elapsed_s},
                       {"days", o.elapsed_s / kDay_s},
                       {"goodput", o.goodput},
                       {"interval_s", o.interval_s},
                       {"energy_MWh", o.energy_J / 3.6e9},
                       {"cost_usd", o.cost_usd}});
  nlohmann::json curve = nlohmann::json::array();
  for (std::size_t i = 0; i < e.goodput_curve.size(); ++i) {
    nlohmann::json point = {{"interval_s", e.goodput_curve[i].first}, {"goodput", e.goodput_curve[i].second}};
    if (i < e.simulated_curve.size()) point["simulated_goodput"] = e.simulated_curve[i].second;
    curve.push_back(point);
  }
  const auto& all = e.what_if.front();
  return {{"scenario", r.baseline.scenario},
          {"model", r.baseline.model},
          {"gpu", r.baseline.gpu},
          {"gpus", in.gpus},
          {"nodes", in.nodes},
          {"steps", cfg.steps},
          {"tokens", cfg.tokens},
          {"iteration_s", in.iteration_s},
          {"straggler_iteration_s", in.straggler_iteration_s},
          {"stragglers",
           {{"count", in.stragglers},
            {"fraction", cfg.straggler_fraction},
            {"slowdown", cfg.straggler_slowdown},
            {"seed", cfg.straggler_seed},
            {"ranks", r.straggler_ranks}}},
          {"busy_fraction", in.busy_fraction},
          {"failures",
           {{"per_gpu_hour", cfg.failures_per_gpu_hour},
            {"source", cfg.failure_rate_source},
            {"job_mtbf_s", e.mtbf_s},
            {"restart_s", cfg.restart_s}}},
          {"checkpoint",
           {{"state_bytes", in.state_bytes},
            {"mode", mode_name(cfg.mode)},
            {"write_s", e.checkpoint_write_s},
            {"stall_s", e.checkpoint_stall_s},
            {"taken", e.checkpoints},
            {"young_s", e.young_s},
            {"young_goodput", e.young_goodput},
            {"daly_s", e.daly_s},
            {"daly_goodput", e.daly_goodput},
            {"optimum_s", e.optimum_s},
            {"optimum_goodput", e.optimum_goodput},
            {"simulated_optimum_s", e.simulated_optimum_s},
            {"simulated_optimum_goodput", e.simulated_optimum_goodput},
            {"simulated_optimum_goodput_stderr", e.simulated_optimum_stderr},
            {"simulated_goodput", e.simulated_goodput},
            {"simulated_failures_per_run", e.simulated_failures},
            {"simulated_runs", e.simulated_trials},
            {"interval_s", e.interval_s},
            {"interval_given", e.interval_given},
            {"lower_interval_s", e.lower_interval_s}}},
          {"power",
           {{"busy_w", in.busy_w},
            {"busy_source", r.busy_power_source},
            {"idle_w", in.idle_w},
            {"idle_source", r.idle_power_source},
            {"node_w", cfg.node_w},
            {"pue", cfg.pue},
            {"train_w", e.train_power_w}}},
          {"cost_per_gpu_hour", cfg.cost_per_gpu_hour},
          {"time_to_train_s", all.elapsed_s},
          {"time_to_train_days", all.elapsed_s / kDay_s},
          {"goodput", all.goodput},
          {"energy_MWh", all.energy_J / 3.6e9},
          {"cost_usd", all.cost_usd},
          {"sampled_layers", r.baseline.sampled_layers.has_value()},
          {"what_if", what_if},
          {"goodput_curve", curve}};
}

}  // namespace exasim::api
