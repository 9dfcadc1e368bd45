#pragma once
// The tune of one or more scenarios (`exasim tune`, `exasim sweep --tune`): the analytic search of
// each (sim/tune/search.hpp), then the full simulation of every scenario's best K in one batch
// (batch.hpp), each scenario's simulated grids ranked by simulated time, then by grid.

#include "sim/cli/batch.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/tune/search.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace exasim::cli {

struct TuneFlags {
  std::int64_t top = 16;  ///< grids simulated in full (signed: a negative value gets the range check's message)
  std::string scheme = std::string(scenario::schemes().front().name);  ///< --scheme: a scheme's name or all
};

/// InputError naming --top when it is outside [1, 100000], --scheme when it is not a choice.
void check_tune_flags(const TuneFlags& flags);
/// The scheme --scheme names (checked by check_tune_flags); nullptr for all.
[[nodiscard]] const scenario::Scheme* scheme_choice(const TuneFlags& flags);

struct TunedConfig {
  scenario::Scenario scenario;  ///< the base with this grid
  tune::Candidate candidate;
  PointResult result;
};

/// How the analytic estimate compares with the simulation over the simulated grids.
struct AnalyticAccuracy {
  double rank_correlation = 0;        ///< Spearman, analytic against simulated time
  double mean_abs_error_percent = 0;  ///< mean of |analytic - simulated| / simulated
  double max_abs_error_percent = 0;
  double mean_error_percent = 0;  ///< signed: negative when the estimate is optimistic
};

struct TuneOutcome {
  scenario::Scenario base;
  std::string scheme;                          ///< --scheme
  const scenario::Scheme* searched = nullptr;  ///< its entry; nullptr: every scheme
  tune::SearchResult search;
  std::vector<TunedConfig> simulated;                       ///< fastest simulated first
  std::vector<std::pair<std::string, std::string>> failed;  ///< config label, why the simulation refused it
  AnalyticAccuracy accuracy;
  [[nodiscard]] double analytic_configs_per_s() const {
    return search.analytic_wall_s > 0 ? static_cast<double>(search.fitting) / search.analytic_wall_s : 0;
  }
};

/// Exit code of `exasim tune` when no configuration fits (documented in docs/tune.md): the question was
/// well-formed, the answer is "none", and a script must not read an empty table as a result.
inline constexpr int kExitNothingFits = 4;

/// What to change when no configuration of the search fits: the model state's size against the GPUs'
/// memory (the GPU count that would hold it fully sharded), and each refusal reason's lever. Lines of
/// text, each starting with two spaces.
[[nodiscard]] std::string no_fit_advice(const TuneOutcome& t);

/// Loads a scenario to be tuned: as scenario::load_scenario, but when the scenario's own configuration
/// cannot run on the GPUs asked (`--set gpus=...`, a --vary point), another stands in for it (tune
/// replaces it anyway): the first that loads of what the schemes, in table order, enumerate for that GPU
/// count alone (scenario::Scheme::enumerate on a scenario of nothing else: AxoNN 4D's grids). The first
/// error is rethrown when none loads.
[[nodiscard]] scenario::Scenario load_for_tune(const std::string& path, const std::vector<std::string>& overrides);

/// Tunes every scenario (each fixes machine, model, GPUs and training); one batch simulates them all.
[[nodiscard]] std::vector<TuneOutcome> tune_scenarios(const std::vector<scenario::Scenario>& bases,
                                                      const TuneFlags& flags, const BatchOptions& batch,
                                                      std::ostream& log);
[[nodiscard]] TuneOutcome tune_scenario(const scenario::Scenario& base, const TuneFlags& flags,
                                        const BatchOptions& batch, std::ostream& log);

}  // namespace exasim::cli
