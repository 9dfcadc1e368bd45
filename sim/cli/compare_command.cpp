// `exasim compare MEASURED... --scenario SCEN`: measured steps against the scenario's simulated iteration,
// by kernel class and by collective kind and size band (traces/trace_compare.hpp).
#include "sim/cli/command.hpp"

#include "sim/api/simulate.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_files.hpp"
#include "traces/measured.hpp"
#include "traces/trace_compare.hpp"

#include <filesystem>
#include <memory>
#include <ostream>
#include <set>

namespace exasim::cli {

Command add_compare_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> files, overrides;
    std::string scenario_path, out_path;
    std::uint32_t rank = 0;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("compare", "Compare measured traces with the simulated iteration of a scenario");
  cmd->add_option("measured", o->files, "Kineto trace (.json or .json.gz, one per rank) or exasim trace.csv")
      ->required();
  cmd->add_option("--scenario", o->scenario_path, "Scenario JSON file to simulate")->required();
  cmd->add_option("--set", o->overrides, "Override a scenario field: path=value (repeatable)")->allow_extra_args(false);
  cmd->add_option("--rank", o->rank, "Simulated rank to compare with")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object instead of the table");
  cmd->add_option("--out", o->out_path, "Write a Chrome trace (Perfetto) with measured and simulated side by side");
  return {cmd, [o](std::ostream& out, std::ostream&) {
            // Checked before the traces are read: a bad --out must not come after the work.
            std::unique_ptr<OutputFiles> files;
            const std::filesystem::path out_file = o->out_path;
            if (!o->out_path.empty()) {
              if (!out_file.has_filename()) throw InputError("--out", o->out_path, "must name a file, e.g. side.json");
              files = std::make_unique<OutputFiles>(
                  "--out", out_file.has_parent_path() ? out_file.parent_path() : std::filesystem::path("."),
                  std::vector<std::string>{out_file.filename().string()});
            }
            std::vector<trace::MeasuredTrace> measured;
            std::set<std::filesystem::path> seen;
            for (const auto& file : o->files) {
              std::error_code ec;
              if (!seen.insert(std::filesystem::weakly_canonical(file, ec)).second)
                throw InputError(file, "", "given twice: each measured trace is one rank, given once");
              for (auto& t : trace::read_measured(file)) {
                // One run's ranks ran on one kind of device: traces of two would compare as nothing real.
                if (!measured.empty() && t.device != measured.front().device)
                  throw InputError(file, "deviceProperties[0].name",
                                   "the trace ran on '" + t.device + "' but " + measured.front().source + " on '" +
                                       measured.front().device + "': compare traces of one run");
                measured.push_back(std::move(t));
              }
            }
            const auto scenario = scenario::load_scenario(o->scenario_path, o->overrides);
            if (measured.size() > scenario.gpus)
              throw InputError(o->files.front(), "",
                               std::to_string(measured.size()) + " measured ranks, more than the scenario's " +
                                   std::to_string(scenario.gpus) + " GPUs (" + o->scenario_path + ")");
            if (o->rank >= scenario.gpus)
              throw InputError("--rank", std::to_string(o->rank),
                               "the scenario has ranks 0-" + std::to_string(scenario.gpus - 1));
            api::SimulateOptions run;
            run.traced_ranks.assign(o->rank + 1, false);
            run.traced_ranks[o->rank] = true;
            std::vector<trace::TraceRow> rows;
            run.on_trace = [&rows](const scenario::PreparedJob&, std::vector<trace::TraceRow> traced) {
              rows = std::move(traced);
            };
            const auto summary = api::simulate(scenario, run);
            const auto simulated = trace::from_trace_rows(rows, o->rank, "simulated");
            const auto comparison = trace::compare(measured, simulated, summary.iteration_time_s, o->scenario_path);
            if (files) {
              files->stage(out_file.filename().string(),
                           [&](const std::string& path) { trace::write_side_by_side(path, measured, rows); });
              files->commit();
            }
            if (o->json) {
              out << trace::to_json(comparison).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
            } else {
              trace::print_comparison(out, comparison);
              if (!o->out_path.empty()) out << "side-by-side trace written to " << o->out_path << "\n";
            }
            return 0;
          }};
}

}  // namespace exasim::cli
