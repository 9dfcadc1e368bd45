#pragma once
// A router for tests of the stage loop on real backends, while the collectives router has only
// single-stage rings: the ring, run as two stages of two bundles each. Header-only; tests only.

#include "sim/exec/stage_router.hpp"

namespace exasim::exec {

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
