#pragma once
// How the execution core turns a ready collective into stages of routed bundles: by default the
// collectives router (sim/collectives/router.hpp); tests inject their own to drive the stage loop with
// shapes the real router does not produce yet (several stages, several bundles a stage).
//
// LIMITATIONS: one router per run; a router must give the same answer for the same call (the core
// routes stage s when stage s-1 ends, not all at once).

#include "sim/collectives/router.hpp"

namespace exasim::exec {

class StageRouter {
 public:
  virtual ~StageRouter() = default;
  [[nodiscard]] virtual collectives::Algorithm resolve(collectives::Algorithm requested, const topo::Topology& topology,
                                                       const collectives::GroupCall& call) const {
    return collectives::resolve_algorithm(requested, topology, call);
  }
  [[nodiscard]] virtual std::uint32_t stage_count(collectives::Algorithm resolved, const topo::Topology& topology,
                                                  const collectives::GroupCall& call) const {
    return collectives::stage_count(resolved, topology, call);
  }
  virtual void route_stage(collectives::Algorithm resolved, const topo::Topology& topology,
                           const collectives::GroupCall& call, std::uint32_t stage, const topo::LinkLoadView* load,
                           const collectives::OnHop& on_hop, collectives::StageRoute& out) const {
    collectives::route_stage(resolved, topology, call, stage, load, on_hop, out);
  }
};

/// The collectives router itself.
[[nodiscard]] inline const StageRouter& default_router() {
  static const StageRouter router;
  return router;
}

}  // namespace exasim::exec
