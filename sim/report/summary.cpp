#include "sim/report/summary.hpp"

#include "sim/schedule/moe.hpp"

#include <algorithm>
#include <string>
#include <variant>

namespace exasim::report {

Summary make_summary(const scenario::Scenario& s, const schedule::Plan& plan, const runtime::RunResult& r) {
  const auto& entry = scenario::scheme_of(s);
  Summary out;
  out.scenario = s.name;
  out.backend = r.backend;
  out.machine = s.machine.name;
  out.gpu = s.machine.gpu.name;
  out.model = s.model.name;
  out.parameters = s.model.parameters();
  out.gpus = s.gpus;
  out.network = std::string(s.machine.topology_kind());
  out.routing = s.machine.network.value("routing", std::string("minimal"));
  out.placement = std::string(scenario::to_string(s.placement.policy));
  out.collectives = std::string(collectives::to_string(s.collective_algorithm));
  // nccl models one library release: say which.
  if (s.collective_algorithm == collectives::Algorithm::Nccl)
    out.collectives += " (" + s.machine.nccl_profile.name + ")";
  out.scheme = std::string(entry.name);
  out.layout = entry.describe(s);
  if (s.model.moe.enabled()) {
    ExpertLoad load{s.model.moe.experts, s.model.moe.top_k, 1, s.model.active_parameters()};
    for (const auto& field : out.layout)
      if (field.name == "ep") load.ep = std::get<std::int64_t>(field.value);
    const auto routing = schedule::route_experts(s.model.moe, static_cast<std::uint32_t>(load.ep));
    load.busiest_over_mean = routing.max_over_mean();
    load.dropped = 1 - routing.kept();
    out.experts = load;
  }
  out.global_batch = s.training.global_batch;
  out.recompute = std::string(schedule::to_string(s.training.recompute));
  out.attention = std::string(schedule::to_string(s.training.attention));
  out.dropout = s.training.dropout;
  out.dtype = std::string(gpu::to_string(s.training.dtype));
  out.seed = s.seed;

  // Throughput as Megatron-LM and AxoNN report it: flops of the iteration over its time and GPU count.
  const double G = s.gpus;
  const auto flops = entry.flops(s);
  const double t = r.iteration_s;
  const double peak = s.machine.gpu.peak_bf16_flops;
  out.iteration_time_s = t;
  out.model_flops = flops.model;
  out.hardware_flops = flops.hardware;
  out.tflops_per_gpu = flops.hardware / (t * G) / 1e12;
  out.model_tflops_per_gpu = flops.model / (t * G) / 1e12;
  out.peak_tflops_per_gpu = peak / 1e12;
  out.percent_of_peak = 100 * flops.hardware / (t * G * peak);
  out.mfu_percent = 100 * flops.model / (t * G * peak);
  out.total_pflops = flops.hardware / t / 1e15;

  // Mean over ranks of where the iteration went.
  const auto& dims = plan.grid.dims();
  double compute = 0, idle = 0, slowed = 0;
  std::vector<double> exposed(dims.size(), 0.0);
  for (const auto& rank : r.ranks) {
    compute += rank.compute_s;
    slowed += rank.slowed_s;
    idle += t - rank.finish_s;
    for (std::size_t d = 0; d < dims.size(); ++d) exposed[d] += rank.exposed_s[d];
  }
  const double n = std::max<double>(1, static_cast<double>(r.ranks.size()));
  out.compute_s = compute / n;
  out.compute_slowed_s = slowed / n;
  out.idle_s = idle / n;
  for (std::size_t d = 0; d < dims.size(); ++d)
    out.dimensions.push_back({dims[d].name, exposed[d] / n, r.rank0_wire_bytes[d], r.rank0_collectives[d]});
  out.ranks = r.ranks;

  out.memory = entry.memory_per_gpu(s);
  out.memory_basis = {std::string(gpu::to_string(s.training.dtype)), schedule::param_bytes(s.training).gradients,
                      std::string(schedule::to_string(s.training.recompute)),
                      std::string(schedule::to_string(s.training.attention)), s.training.dropout};
  out.memory_capacity_bytes = s.machine.gpu_choice.device.hbm_capacity_bytes.value;

  out.events = r.events;
  out.flows = r.flows;
  out.wall_s = r.wall_s;
  return out;
}

}  // namespace exasim::report
