// `exasim validate`: calibrate this host (once, cached), emulate the scenario, simulate it on the
// calibrated host, and compare iteration times and op classes.
#include "sim/cli/command.hpp"
#include "sim/cli/emulation_flags.hpp"
#include "sim/core/error.hpp"

#include "validate/mpirun.hpp"
#include "validate/validation.hpp"
#include "validate/verdict.hpp"

#include <cmath>
#include <ostream>

namespace exasim::cli {

Command add_validate_command(CLI::App& app) {
  struct Options {
    std::string scenario;
    validate::ValidateOptions run;
    EmulationFlags flags;
    bool json = false;
    double max_error_pct = 0;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("validate", "Emulate a scenario on this host and compare with the simulator");
  cmd->add_option("scenario", o->scenario, "Scenario JSON file")->required();
  cmd->add_option("--ranks", o->run.ranks, "MPI ranks; must equal the scenario's gpus")->required();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_option("--set", o->run.overrides, "Override a scenario field: path=value (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--calibration", o->run.calibration, "Machine file from exasim calibrate (default: cached)");
  cmd->add_flag("--recalibrate", o->run.recalibrate, "Measure the host again even if a calibration is cached");
  auto* paired = cmd->add_flag("--paired", o->run.require_paired,
                               "Probe the host before each emulation and simulate that repeat on the calibration "
                               "scaled to the probe, so that host drift moves both sides (the default; about 3 s "
                               "per repeat)");
  cmd->add_flag("--unpaired{false}", o->run.paired,
                "Simulate once on the checked calibration instead of probing before each emulation (faster; "
                "what the measurement drifts by goes into the error)")
      ->excludes(paired);
  cmd->add_flag("--quick-calibration", o->run.quick_calibration, "Fewer microbenchmark repetitions when calibrating");
  cmd->add_option("--out", o->run.out_dir,
                  "Keep the last emulation's trace.csv and summary.json here (the log says when it was not kept)");
  cmd->add_option("--repeats", o->run.repeats,
                  "Emulations to run; the measured time is their median, and their spread is reported")
      ->capture_default_str();
  cmd->add_option("--max-steal-pct", o->run.max_steal_pct,
                  "Run an emulation again (up to --repeats more) when the hypervisor took more than this % of the "
                  "CPU time during it; the --repeats least disturbed are kept (100: keep every emulation)")
      ->capture_default_str();
  cmd->add_option("--timeout-s", o->run.timeout_s, "Kill the emulation after this many seconds")->capture_default_str();
  cmd->add_option("--max-error-pct", o->max_error_pct,
                  "For CI: exit 4 when the error's 95% interval over the repeats lies beyond this, 5 when it "
                  "straddles it or a kept emulation lost more than 15% (or --max-steal-pct, when higher) of the CPU "
                  "time to the hypervisor (too noisy to judge), 0 when inside (0: never judge)");
  add_emulation_flags(cmd, o->flags);
  return {cmd, [o](std::ostream& out, std::ostream& err) {
            if (!(o->max_error_pct >= 0 && o->max_error_pct <= 1e6))  // NaN compares false: never a gate
              throw InputError("--max-error-pct", std::to_string(o->max_error_pct),
                               "must be a percentage from 0 (never fail) to 1e6");
            auto run = o->run;
            run.emu = o->flags.resolve();
            run.emu.timeout_s = run.timeout_s;
            try {
              auto result = validate::validate_scenario(o->scenario, run, err);
              if (o->json)
                out << validate::to_json(result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
              else
                validate::print(out, result);
              if (o->max_error_pct > 0) return validate::verdict_exit_code(result, o->max_error_pct, err);
            } catch (const validate::EmulationFailed& e) {
              err << "exasim: error: " << e.what() << "\n";
              return 3;
            }
            return 0;
          }};
}

}  // namespace exasim::cli
