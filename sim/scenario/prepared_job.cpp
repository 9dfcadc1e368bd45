#include "sim/scenario/prepared_job.hpp"

#include "sim/core/error.hpp"

#include <stdexcept>
#include <string>

namespace exasim::scenario {

std::unique_ptr<PreparedJob> prepare_job(const Scenario& s) {
  auto p = std::make_unique<PreparedJob>();
  try {
    p->plan = scheme_of(s).build_plan(s);
  } catch (const std::length_error& e) {  // schedule::StreamBuilder's handle limit
    throw InputError(
        s.source, "model.layers",
        std::string(e.what()) + ": fewer layers (got " + std::to_string(s.model.layers) + ") or a smaller batch");
  }
  p->topology = build_topology(s.machine, s.gpus, s.seed);
  p->gpu = gpu::make_gpu_model(s.machine.gpu_choice);
  p->job.plan = &p->plan;
  p->job.gpu_of_rank = place_ranks(s.placement, *p->topology, s.gpus);
  p->job.collective_step_overhead_s = s.machine.collective_step_overhead_s;
  p->job.collectives_in_post_order = s.machine.collectives_in_post_order;
  p->job.step_costs = s.machine.step_costs;
  p->job.nccl_profile = s.machine.nccl_profile;
  p->job.collective_algorithm = s.collective_algorithm;
  p->job.compute_slowdown_beside_comm =
      s.overlap.interference ? s.machine.gpu_choice.device.comm_overlap_slowdown.value : 0.0;
  p->job.seed = s.seed;
  for (const auto& kernel : p->plan.kernels) p->job.kernel_time_s.push_back(p->gpu->time_s(kernel));
  return p;
}

}  // namespace exasim::scenario
