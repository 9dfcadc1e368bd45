#include "sim/scenario/prepared_job.hpp"

namespace exasim::scenario {

std::unique_ptr<PreparedJob> prepare_job(const Scenario& s) {
  auto p = std::make_unique<PreparedJob>();
  p->plan = scheme_of(s).build_plan(s);
  p->topology = build_topology(s.machine, s.gpus, s.seed);
  p->gpu = gpu::make_gpu_model(s.machine.gpu_choice);
  p->job.plan = &p->plan;
  p->job.gpu_of_rank = place_ranks(s.placement, *p->topology, s.gpus);
  p->job.collective_step_overhead_s = s.machine.collective_step_overhead_s;
  p->job.collective_algorithm = s.collective_algorithm;
  p->job.seed = s.seed;
  for (const auto& kernel : p->plan.kernels) p->job.kernel_time_s.push_back(p->gpu->time_s(kernel));
  return p;
}

}  // namespace exasim::scenario
