// `exasim emulate`: run a scenario on MPI processes with emulated GPUs (mpirun started for the user).
#include "sim/cli/command.hpp"
#include "sim/cli/emulation_flags.hpp"

#include "validate/mpirun.hpp"
#include "validate/validation.hpp"

#include <ostream>

namespace exasim::cli {

Command add_emulate_command(CLI::App& app) {
  struct Options {
    std::string scenario;
    validate::EmulateOptions run;
    EmulationFlags flags;
    std::string fault;
    int fault_rank = 1;
  };
  auto o = std::make_shared<Options>();
  o->run.timeout_s = 300;
  auto* cmd = app.add_subcommand("emulate", "Run a scenario for real on MPI ranks with emulated GPUs; trace every op");
  cmd->add_option("scenario", o->scenario, "Scenario JSON file")->required();
  cmd->add_option("--ranks", o->run.ranks, "MPI ranks; must equal the scenario's gpus")->required();
  // Required: an emulation writes a trace per rank, and a default folder would land them in whatever
  // directory the command happened to run from.
  cmd->add_option("--out", o->run.out_dir, "Write trace.csv, summary.json into this folder")->required();
  cmd->add_option("--set", o->run.overrides, "Override a scenario field: path=value (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--hostfile", o->run.hostfile, "Open MPI hostfile, to run across nodes");
  cmd->add_option("--timeout-s", o->run.timeout_s,
                  "A rank blocked this long aborts the run; mpirun is killed after twice this")
      ->capture_default_str();
  add_emulation_flags(cmd, o->flags);
  // Testing only (hidden): make one rank die or hang, to check that the run ends with an error.
  cmd->add_option("--inject-fault", o->fault, "die | hang")->group("");
  cmd->add_option("--fault-rank", o->fault_rank, "the rank that fails")->group("");
  return {cmd, [o](std::ostream&, std::ostream& err) {
            auto run = o->run;
            run.emu = o->flags.resolve();
            run.emu.timeout_s = run.timeout_s;
            run.timeout_s *= 2;  // the ranks' own timeout fires first, with the better message
            if (!o->fault.empty())
              run.extra_emu_args = {"--inject-fault", o->fault, "--fault-rank", std::to_string(o->fault_rank)};
            try {
              return validate::emulate(o->scenario, run, err);
            } catch (const validate::EmulationFailed& e) {
              err << "exasim: error: " << e.what() << "\n";
              return 3;
            }
          }};
}

}  // namespace exasim::cli
