// auto: per collective, the candidate of least estimated time (internal/cost_model.hpp,
// docs/collectives.md section 6). It never runs as itself: resolve_algorithm answers the choice.
#include "sim/collectives/group_layout.hpp"
#include "sim/collectives/internal/registry.hpp"

namespace exasim::collectives::detail {

const AlgorithmEntry& auto_algorithm() {
  static const AlgorithmEntry entry{"auto",
                                    [](const topo::Topology& topology, const GroupCall& call) {
                                      if (schedule::is_p2p(call.kind) || call.size() < 2) return Algorithm::Ring;
                                      const GroupLayout layout = group_layout(topology, call);
                                      return choose_fastest(call.kind, cost_inputs(topology, call, layout), call.bytes);
                                    },
                                    /*applies=*/nullptr,
                                    /*estimate_s=*/nullptr,
                                    /*closed_form=*/nullptr,
                                    ring_analytic_cost,
                                    /*stage_count=*/nullptr,
                                    /*route_stage=*/nullptr,
                                    /*joins_any_members=*/true,
                                    /*bundles_are_cycles=*/true,
                                    /*may_split_by_node=*/true,
                                    /*emulated_by=*/Algorithm::Auto,
                                    /*stage_ring=*/nullptr};
  return entry;
}

}  // namespace exasim::collectives::detail
