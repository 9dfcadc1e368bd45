#pragma once
// The placement search of `exasim place` as a call, for `exasim tune --place`: tune ranks the
// configurations on the scenario's own placement, then each of the best few is placed, and the ranking
// that counts is the one after placement (a grid that loses on packed nodes may win once its rings are
// laid along the network).
//
// LIMITATIONS: the whole machine is the allocation (place --nodes is not offered through tune); the
// placements are simulated as `place` simulates them, so a tuned configuration costs place's simulations
// (the baselines and --top candidates) on top of tune's.

#include "sim/cli/batch.hpp"
#include "sim/scenario/scenario.hpp"

#include <iosfwd>
#include <string>

namespace exasim::cli {

/// What placing one configuration gave.
struct PlacedConfig {
  std::string reference;       ///< the baseline compared against: "packed"
  double reference_s = 0;      ///< its simulated iteration time
  std::string plan;            ///< the fastest placement's label
  double plan_s = 0;           ///< its simulated iteration time
  std::size_t placements = 0;  ///< placements simulated
};

/// Plans the placement of `s` on its whole machine (`exasim place` with no --nodes): `budget_s` wall
/// seconds of analytic search, the baselines and `top` candidates simulated through `batch`.
[[nodiscard]] PlacedConfig place_scenario(const scenario::Scenario& s, double budget_s, std::int64_t top,
                                          const BatchOptions& batch, std::ostream& log);

}  // namespace exasim::cli
