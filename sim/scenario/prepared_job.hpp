#pragma once
// Everything a runtime needs to execute a scenario, built once: the plan, the network, the GPU model's
// cost of every kernel, and the placement of ranks on GPUs. `exasim simulate` (fast core and SimGrid)
// and `exasim-emu` (MPI) all start from here, so they execute the same job.

#include "sim/gpu/gpu_model.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedule/plan.hpp"
#include "topologies/topology.hpp"

#include <memory>

namespace exasim::scenario {

struct PreparedJob {
  schedule::Plan plan;
  std::unique_ptr<topo::Topology> topology;
  std::unique_ptr<gpu::GpuModel> gpu;
  runtime::Job job;  ///< job.plan points at `plan`: a PreparedJob never moves (held by unique_ptr)

  PreparedJob() = default;
  PreparedJob(const PreparedJob&) = delete;
  PreparedJob& operator=(const PreparedJob&) = delete;
};

/// Builds the plan of the scenario's scheme, its topology, kernel times and placement. InputError on
/// anything the scenario asks that the machine cannot give (too few nodes, a placement file that does
/// not fit).
[[nodiscard]] std::unique_ptr<PreparedJob> prepare_job(const Scenario& scenario);

}  // namespace exasim::scenario
