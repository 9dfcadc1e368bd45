#pragma once
// Helpers for tests of the execution core and its backends: small machines, plans and jobs, and a
// router for the stage loop on real backends while the collectives router has only single-stage rings
// (the ring, run as two stages of two bundles each). Header-only; tests only.

#include "sim/exec/stage_router.hpp"
#include "sim/runtime/runtime.hpp"
#include "topologies/single_switch.hpp"

namespace exasim::exec {

namespace testing {

/// One node of `gpus` GPUs whose GPU-GPU links have `bandwidth_Bps` and `latency_s` (and one NIC).
inline topo::SingleSwitch one_node(std::uint32_t gpus, double bandwidth_Bps = 100e9, double latency_s = 1e-6) {
  topo::SingleSwitchParams p;
  p.node = {gpus, bandwidth_Bps, latency_s, 1, 25e9, 1e-6};
  p.nodes = 1;
  return topo::SingleSwitch(p);
}

/// A plan over one grid dimension "x" of p ranks, with one empty stream to fill.
inline schedule::Plan one_dim_plan(std::uint32_t p) {
  schedule::Plan plan;
  plan.grid = schedule::ProcessGrid({{"x", p}});
  plan.streams.resize(1);
  return plan;
}

/// A job of `plan` whose kernels all take `kernel_s`.
inline runtime::Job job_for(const schedule::Plan& plan, double kernel_s, double step_overhead_s = 0) {
  runtime::Job job;
  job.plan = &plan;
  job.kernel_time_s.assign(plan.kernels.size(), kernel_s);
  job.collective_step_overhead_s = step_overhead_s;
  return job;
}

}  // namespace testing

/// Each collective runs the real ring's route twice, one stage after the other, and each stage as two
/// bundles over that same route carrying a quarter of the ring's bytes each: they share every link,
/// so a stage takes half the ring's bandwidth time, and the collective the ring's bandwidth time plus
/// two latency terms instead of one. Rank 0's wire bytes add up to the ring's.
class SplitRingRouter final : public StageRouter {
 public:
  [[nodiscard]] std::uint32_t stage_count(collectives::Algorithm, const topo::Topology&,
                                          const collectives::GroupCall&) const override {
    return 2;
  }
  void route_stage(collectives::Algorithm resolved, const topo::Topology& topology, const collectives::GroupCall& call,
                   std::uint32_t /*stage*/, const topo::LinkLoadView* load, const collectives::OnHop& on_hop,
                   collectives::StageRoute& out) const override {
    StageRouter::route_stage(resolved, topology, call, 0, load, on_hop, out);
    const auto ring = out.bundles.front();
    out.bundles = {{ring.begin, ring.count, ring.bytes / 4}, {ring.begin, ring.count, ring.bytes / 4}};
    out.rank0_wire_bytes /= 2;
  }
};

}  // namespace exasim::exec
