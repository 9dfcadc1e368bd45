#pragma once
// Which GPUs straggle (job.stragglers): a fraction of the ranks, drawn without replacement from the
// stragglers' seed, each running its compute `slowdown` times slower. The vector feeds
// runtime::Job::rank_compute_factor, so the synchronous step waits for them in the simulation itself.
//
// LIMITATIONS: a straggler is slow by one factor on every kernel for the whole run (thermal throttling,
// a weak part); a transient slowdown, or a slow link rather than a slow GPU, is not modelled.

#include <cstdint>
#include <vector>

namespace exasim::job {

/// How many of `ranks` straggle: fraction x ranks rounded to nearest, at least one when fraction > 0.
[[nodiscard]] std::uint32_t straggler_count(std::uint32_t ranks, double fraction);

/// Per-rank compute factors: `slowdown` on straggler_count ranks picked by a Fisher-Yates draw from
/// SplitMix64(seed), 1 elsewhere. Empty when no rank straggles.
[[nodiscard]] std::vector<double> straggler_factors(std::uint32_t ranks, double fraction, double slowdown,
                                                    std::uint64_t seed);

}  // namespace exasim::job
