#pragma once
// Measured per-kind, per-size costs of a collective step, for a machine whose collectives were
// calibrated kind by kind (`exasim calibrate` fits one row per collective kind and size band).
//
// A row may name the ring size it was measured on (`members`): on an oversubscribed emulation host a
// 2-member ring's step costs more than the 4- and 8-member rings of one fit say (-7 to -24% on the small
// sizes), since fewer ranks share each core's wake-ups. Each stage of a collective takes the rows of
// the ring it runs on (router.hpp's stage_ring: the group's ring, or a hierarchical collective's intra-
// or inter-node ring over that stage's buffer) when there are any, else the rows without a size; a
// stage that is no ring (a tree, direct exchanges) takes the rows without a size.
//
// A machine's `collectives.step_overhead_s` is one software cost per ring step for every collective,
// and the links' bandwidth is every collective's: right for a library whose kinds share one step
// (NCCL's ring kernels), off where they do not. On an emulation host the all-reduce (Open MPI's libnbc
// ring) and the all-gather / reduce-scatter rings cost a different amount per step, and a 64 KiB step
// costs more than its bytes say: one fit for all of them left residuals of -29% to +34%. A row
// replaces, for the collectives of its kind whose buffer is at most `up_to_bytes`, the step overhead
// and the share of the route's bandwidth the collective reaches.
//
// LIMITATIONS:
//  - applied per stage by the router (collectives::route_stage) for both simulation runtimes (fast
//    core and SimGrid); the analytic estimates of `tune` and `place` by the dimension's ring
//    (tune::collective_cost), and auto's choice of algorithm by the whole group's row;
//  - a tree's steps take the rows of rings (any size): the calibration times no tree;
//  - Send/Recv and all-to-all have no rows (the calibration measures neither per kind): they keep the
//    machine's step overhead and the links' bandwidth;
//  - a band is chosen by the buffer of the stage's ring (S; S/L for a hierarchical all-reduce's
//    inter-node stage over L members a node), not the bytes of one step.

#include "sim/schedule/plan.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace exasim::collectives {

struct StepCost {
  schedule::CollKind kind = schedule::CollKind::AllReduce;
  double up_to_bytes = std::numeric_limits<double>::infinity();  ///< largest buffer S the row covers
  double step_overhead_s = 0;                                    ///< replaces collectives.step_overhead_s
  /// Fraction of the route's bandwidth the collective's transfers reach (their bytes are divided by it).
  double bandwidth_scale = 1;
  std::uint32_t members = 0;  ///< the group size the row was measured on; 0: any
};

/// The row for a collective of `kind` over an S-byte buffer on a ring of `members` (0: no ring, any
/// size): among the rows of that kind and size (else, when the kind has none of that size, those of any
/// size), the one with the smallest `up_to_bytes` >= S; null when none covers it.
[[nodiscard]] const StepCost* find_step_cost(const std::vector<StepCost>& rows, schedule::CollKind kind, double bytes,
                                             std::uint32_t members);

}  // namespace exasim::collectives
