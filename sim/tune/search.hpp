#pragma once
// The search stage of `exasim tune` (docs/tune.md): every parallel configuration of a scenario's GPU
// count that a scheme enumerates (scenario::Scheme::enumerate: AxoNN 4D grids; Megatron's tp x pp x dp
// with ZeRO stage, micro-batch, virtual stages, sequence parallelism and recomputation; or every scheme),
// what cannot run dropped with the reason counted (the scheme's refusal and the memory check the
// scenario loader uses), the rest ranked by the analytic estimate (analytic.hpp). The full simulation of
// the best few is the command's (sim/cli/tune_command.cpp).
//
// LIMITATIONS: the overlap flags and placement are the scenario's, not searched; what each scheme leaves
// out of its enumeration is in its header (sim/scenario/schemes/).

#include "sim/scenario/scenario.hpp"
#include "sim/tune/analytic.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace exasim::tune {

/// One configuration that fits, with its analytic estimate.
struct Candidate {
  const scenario::Scheme* scheme = nullptr;
  scenario::ConfigPtr config;                                 ///< of the scheme's own type
  schedule::Recompute recompute = schedule::Recompute::Full;  ///< training.recompute
  double analytic_s = 0;                                      ///< AnalyticModel::iteration_s
  double memory_bytes = 0;                                    ///< the memory model's total per GPU
};

struct SearchResult {
  std::uint64_t considered = 0;  ///< configurations enumerated
  std::uint64_t fitting = 0;     ///< of those, feasible and within the GPU's memory
  /// By reason: the field to blame, or "memory"; when every scheme is searched prefixed "NAME ".
  std::map<std::string, std::uint64_t> refused;
  std::vector<Candidate> ranked;  ///< the fitting ones, fastest estimate first, then by configuration
  double analytic_wall_s = 0;     ///< wall seconds of the estimates (not an output: wall time)
  double ring_setup_wall_s = 0;   ///< wall seconds of the ring tables before them (AnalyticModel::prepare)
};

/// Enumerates, refuses and ranks the configurations of `scheme`; `base` gives everything else.
[[nodiscard]] SearchResult search_scheme(const scenario::Scheme& scheme, const scenario::Scenario& base,
                                         AnalyticModel& model);

/// The search of `only`, or with nullptr of every scheme, merged and ranked together.
[[nodiscard]] SearchResult search(const scenario::Scenario& base, AnalyticModel& model, const scenario::Scheme* only);

/// The configuration as a scenario: `base` with its scheme, parallel config and training.recompute (the
/// scenario struct and its resolved JSON: a scenario ready for `exasim simulate`).
[[nodiscard]] scenario::Scenario with_config(const scenario::Scenario& base, const Candidate& c);

/// The scheme's label: "gx=2 gy=4 gz=8 gdata=16", "tp=8 pp=4 dp=32 zero=1 mb=1 v=2 sp=on recompute=selective".
[[nodiscard]] std::string config_label(const Candidate& c);
/// A total order on configurations (scheme, then its figures, then recompute), for ties of the estimate
/// or simulation.
[[nodiscard]] bool config_less(const Candidate& a, const Candidate& b);

/// Spearman's rank correlation of two equally long series (ties get their mean rank); 0 below 2 points.
[[nodiscard]] double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace exasim::tune
