#include "sim/simgrid/cross_check.hpp"

#include "sim/flow/fast_runtime.hpp"
#include "sim/simgrid/simgrid_runtime.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/single_switch.hpp"

namespace exasim::sg {

namespace {
const topo::NodeSpec kNode{4, 100e9, 1e-6, 2, 25e9, 1e-6};
}

std::unique_ptr<topo::Topology> cross_check_single_switch(std::uint32_t nodes) {
  topo::SingleSwitchParams p;
  p.node = kNode;
  p.nodes = nodes;
  p.switch_latency_s = 3e-7;
  return std::make_unique<topo::SingleSwitch>(p);
}

std::unique_ptr<topo::Topology> cross_check_dragonfly(std::uint32_t groups, std::uint32_t switches,
                                                      std::uint32_t endpoints, topo::RoutingPolicy routing,
                                                      std::uint32_t adaptive_parts) {
  topo::DragonflyParams p;
  p.node = kNode;
  p.groups = groups;
  p.switches_per_group = switches;
  p.endpoints_per_switch = endpoints;
  p.global_links_per_group_pair = 2;
  p.local_bandwidth_Bps = 25e9;
  p.local_latency_s = 10e-9;
  p.global_bandwidth_Bps = 12.5e9;
  p.global_latency_s = 100e-9;
  p.switch_latency_s = 350e-9;
  p.routing = routing;
  p.adaptive_parts = adaptive_parts;
  p.seed = 7;
  return std::make_unique<topo::Dragonfly>(p);
}

CrossCheckResult run_cross_check(const CrossCheckCase& c) {
  const schedule::ModelSpec model{"cross-check", 2, 1024, 16, 512, 4096};
  const std::int64_t batch = std::int64_t{c.grid.gdata} * c.grid.gz * 2;
  const auto plan = schedule::build_axonn4d_plan(model, c.grid, {batch, schedule::Recompute::Full},
                                                 {c.overlap, c.overlap, c.overlap, c.overlap});
  runtime::Job job;
  job.plan = &plan;
  // Kernels of different lengths, so that ranks and groups drift apart as in a real iteration.
  for (std::size_t k = 0; k < plan.kernels.size(); ++k)
    job.kernel_time_s.push_back(20e-6 + 3e-6 * static_cast<double>(k % 7));
  job.collective_step_overhead_s = 1e-6;
  job.collective_algorithm = c.algorithm;

  CrossCheckResult result;
  result.gpus = plan.grid.world_size();
  {
    auto machine = c.make_machine();
    flow::FastOptions options;
    options.router = c.router;
    flow::FastRuntime fast(*machine, options);
    result.fast = fast.run(job, {}, {});
  }
  {
    auto machine = c.make_machine();
    SimgridOptions options;
    options.router = c.router;
    result.simgrid = make_simgrid_runtime(*machine, options)->run(job, {}, {});
  }
  return result;
}

}  // namespace exasim::sg
