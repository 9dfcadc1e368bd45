#pragma once
// `exasim simulate`: its command-line options onto the library call (sim/api/simulate.hpp), and the
// files of --out (traces, summary.json, the resolved scenario).

#include "sim/report/summary.hpp"
#include "sim/scenario/scenario.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exasim::cli {

/// The command's flags as given; simulate() turns them into api::SimulateOptions.
struct SimulateFlags {
  std::string backend = "fast";        ///< fast or simgrid
  std::optional<std::string> out_dir;  ///< write trace.csv, trace.json and summary.json here
  std::string trace_ranks;             ///< "0-7,12"; empty: all ranks up to 256 GPUs, else ranks 0-7
  std::string solver = "local";        ///< the fast core's max-min solver: local, components or reference
  bool ignore_memory = false;          ///< simulate even when the memory model says it does not fit
  std::size_t hottest_links = 0;       ///< --links N: meter links, list the N hottest (0: off)
  bool quiet = false;                  ///< no progress and no wall-time line on the log
};

/// Runs the scenario; returns its summary. Writes traces when `out_dir` is set. Bad options are
/// InputErrors.
[[nodiscard]] report::Summary simulate(const scenario::Scenario& s, const SimulateFlags& options, std::ostream& log);

/// Declares --sample-layers K on a command (simulate, sweep, tune, place): sugar for --set simulation.sample_layers=K.
void add_sample_layers_flag(CLI::App& cmd, std::int64_t& sample_layers);
/// `overrides` with simulation.sample_layers=K appended when --sample-layers was given (the scenario
/// checks K: a bad one is an InputError naming the field).
[[nodiscard]] std::vector<std::string> with_sample_layers(const CLI::App& cmd, std::vector<std::string> overrides,
                                                          std::int64_t sample_layers);

/// Parses "0-7,12,40-41" into a predicate over ranks < world; InputError on malformed lists.
[[nodiscard]] std::vector<bool> parse_rank_list(const std::string& text, std::uint32_t world);

}  // namespace exasim::cli
