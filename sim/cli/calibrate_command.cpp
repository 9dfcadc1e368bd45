// `exasim calibrate`: measure this host (microbenchmarks under mpirun) and fit a machine file for it; or,
// with --from-trace, turn the rates a profiler trace measured into a calibration CSV.
#include "sim/cli/command.hpp"

#include "sim/cli/trace_calibration.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_files.hpp"
#include "validate/mpirun.hpp"
#include "validate/validation.hpp"

#include <fstream>
#include <ostream>

namespace exasim::cli {

Command add_calibrate_command(CLI::App& app) {
  struct Options {
    validate::CalibrateOptions host;
    std::vector<std::string> from_trace;
    std::string device;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("calibrate", "Measure this host with MPI microbenchmarks; write its machine file");
  auto* ranks = cmd->add_option("--ranks", o->host.ranks, "MPI ranks (emulated GPUs) on this host");
  cmd->add_option("--out", o->host.out,
                  "Machine file to write (default: the calibration cache, see validate); with --from-trace, the "
                  "calibration CSV (default: standard output)");
  cmd->add_flag("--quick", o->host.quick, "Fewer repetitions of the same points (seconds, noisier)");
  cmd->add_option("--repeats", o->host.repeats,
                  "Microbenchmark runs; the file is one fit over the kept runs' points and records their spread")
      ->capture_default_str();
  cmd->add_option("--max-steal-pct", o->host.max_steal_pct,
                  "Run a microbenchmark run again (up to --repeats more) when the hypervisor took more than this % "
                  "of the CPU time during it; the --repeats least disturbed are kept (100: keep every run)")
      ->capture_default_str();
  cmd->add_option("--hostfile", o->host.hostfile, "Open MPI hostfile, to calibrate across nodes");
  cmd->add_option("--timeout-s", o->host.timeout_s, "Give up after this many seconds")->capture_default_str();
  auto* from_trace = cmd->add_option("--from-trace", o->from_trace,
                                     "Kineto traces (.json / .json.gz): write the GEMM, memory, attention and "
                                     "collective rates they measured as a calibration CSV instead");
  cmd->add_option("--device", o->device, "With --from-trace: the device the trace ran on (default: from the trace)");
  from_trace->excludes(ranks);
  return {cmd, [o, ranks](std::ostream& out, std::ostream& err) {
            if (!o->from_trace.empty()) {
              const auto csv = calibration_csv_from_traces(o->from_trace, o->device, err);
              if (o->host.out.empty()) {
                out << csv;
                return 0;
              }
              write_output_file("--out", o->host.out, csv);
              out << o->host.out << "\n";
              return 0;
            }
            if (ranks->count() == 0)
              throw InputError("--ranks", "", "required (or calibrate from traces: --from-trace)");
            try {
              out << validate::calibrate(o->host, err) << "\n";
            } catch (const validate::EmulationFailed& e) {
              err << "exasim: error: " << e.what() << "\n";
              return 3;
            }
            return 0;
          }};
}

}  // namespace exasim::cli
