#pragma once
// The library call behind `exasim job` (docs/job.md): the scenario's iteration simulated once as is, and
// once more with its stragglers slowed (job.stragglers: the synchronous step waits for them in the
// simulation), then the whole run priced by sim/job/job_model.hpp: time to train with failures,
// restarts and checkpoints, the checkpoint interval, goodput, energy and cost.

#include "sim/api/simulate.hpp"
#include "sim/job/job_model.hpp"
#include "sim/report/summary.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace exasim::api {

struct JobReport {
  report::Summary baseline;                    ///< the iteration, every GPU at full speed
  report::Summary with_stragglers;             ///< the same with the stragglers slowed (= baseline without any)
  std::vector<std::uint32_t> straggler_ranks;  ///< slowed ranks, ascending
  job::JobInputs inputs;
  job::JobEstimate estimate;
  std::string busy_power_source, idle_power_source;
};

/// InputError when the scenario has no `job` object, or its power figures contradict each other.
[[nodiscard]] JobReport run_job(const scenario::Scenario& s, const SimulateOptions& options = {});

/// The text view: what `exasim job` prints.
void print_job(std::ostream& out, const JobReport& report);
/// The JSON view (`exasim job --json`, job.json, Python's exasim.job).
[[nodiscard]] nlohmann::json to_json(const JobReport& report);

}  // namespace exasim::api
