// `exasim calibrate`: measure this host (microbenchmarks under mpirun) and fit a machine file for it.
#include "sim/cli/command.hpp"

#include "validate/mpirun.hpp"
#include "validate/validation.hpp"

#include <ostream>

namespace exasim::cli {

Command add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<validate::CalibrateOptions>();
  auto* cmd = app.add_subcommand("calibrate", "Measure this host with MPI microbenchmarks; write its machine file");
  cmd->add_option("--ranks", o->ranks, "MPI ranks (emulated GPUs) on this host")->required();
  cmd->add_option("--out", o->out, "Machine file to write (default: the calibration cache, see validate)");
  cmd->add_flag("--quick", o->quick, "Fewer sizes and repetitions (seconds, noisier)");
  cmd->add_option("--repeats", o->repeats,
                  "Microbenchmark runs; the file takes the median-bandwidth run and records the spread")
      ->capture_default_str();
  cmd->add_option("--hostfile", o->hostfile, "Open MPI hostfile, to calibrate across nodes");
  cmd->add_option("--timeout-s", o->timeout_s, "Give up after this many seconds")->capture_default_str();
  return {cmd, [o](std::ostream& out, std::ostream& err) {
            try {
              out << validate::calibrate(*o, err) << "\n";
            } catch (const validate::EmulationFailed& e) {
              err << "exasim: error: " << e.what() << "\n";
              return 3;
            }
            return 0;
          }};
}

}  // namespace exasim::cli
