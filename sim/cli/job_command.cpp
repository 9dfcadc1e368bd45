// `exasim job SCENARIO`: the whole training run around one iteration (docs/job.md): time to train with
// failures, restarts and checkpoints, the checkpoint interval, stragglers (simulated), goodput, energy
// and cost, and what each effect costs. The scenario's `job` object says what to price.

#include "sim/cli/command.hpp"
#include "sim/cli/simulate.hpp"

#include "sim/api/job.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_files.hpp"
#include "sim/report/summary_views.hpp"

#include <memory>
#include <ostream>

namespace exasim::cli {

Command add_job_command(CLI::App& app) {
  struct Options {
    std::string scenario_path, out_dir;
    std::vector<std::string> overrides;
    std::int64_t sample_layers = 0;
    bool json = false, ignore_memory = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "job", "The whole training run: time to train with failures, checkpoints and stragglers, energy, cost");
  cmd->add_option("scenario", o->scenario_path, "Scenario JSON file with a job object (docs/job.md)")->required();
  cmd->add_option("--set", o->overrides, "Override a scenario field: path=value (repeatable), e.g. job.pue=1.2")
      ->allow_extra_args(false);
  cmd->add_flag("--json", o->json, "Print one JSON object instead of the readable summary");
  cmd->add_option("--out", o->out_dir, "Write job.json and summary.json into this directory (exasim report reads it)");
  cmd->add_flag("--ignore-memory", o->ignore_memory,
                "Simulate even when the memory model says the scenario does not fit the GPU's memory");
  add_sample_layers_flag(*cmd, o->sample_layers);
  return {
      cmd, [o, cmd](std::ostream& out, std::ostream&) {
        std::unique_ptr<OutputFiles> files;
        if (cmd->count("--out") > 0)
          files =
              std::make_unique<OutputFiles>("--out", o->out_dir, std::vector<std::string>{"job.json", "summary.json"});
        const auto scenario =
            scenario::load_scenario(o->scenario_path, with_sample_layers(*cmd, o->overrides, o->sample_layers));
        api::SimulateOptions options;
        options.check_memory = !o->ignore_memory;
        options.concurrent_samples = true;
        const auto report = api::run_job(scenario, options);
        const auto j = api::to_json(report);
        const auto dump = [](const nlohmann::json& doc) {
          return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        };
        if (files) {
          files->stage_text("job.json", dump(j));
          files->stage_text(
              "summary.json",
              report::to_json(report.baseline).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
          files->commit();
        }
        if (o->json) {
          out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        } else {
          api::print_job(out, report);
          if (files) out << "  files written to " << o->out_dir << ": job.json summary.json\n";
        }
        return 0;
      }};
}

}  // namespace exasim::cli
