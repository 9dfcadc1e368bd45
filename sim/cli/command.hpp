#pragma once
// How a subcommand plugs into `exasim`: it declares its options on its own CLI11 subcommand and returns
// the action to run once the command line parsed. The action owns the parsed values (captured shared
// state), may throw InputError for bad input, and returns the exit code.
//
// Adding a command: write add_<name>_command() in its own file, declare it here, list it in cli.cpp.

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>

namespace exasim::cli {

using Action = std::function<int(std::ostream& out, std::ostream& err)>;

struct Command {
  CLI::App* app = nullptr;
  Action action;
};

[[nodiscard]] Command add_simulate_command(CLI::App& app);
[[nodiscard]] Command add_presets_command(CLI::App& app);
[[nodiscard]] Command add_roofline_command(CLI::App& app);
[[nodiscard]] Command add_topo_command(CLI::App& app);
[[nodiscard]] Command add_calibrate_command(CLI::App& app);
[[nodiscard]] Command add_emulate_command(CLI::App& app);
[[nodiscard]] Command add_validate_command(CLI::App& app);
[[nodiscard]] Command add_trace_command(CLI::App& app);
[[nodiscard]] Command add_compare_command(CLI::App& app);
[[nodiscard]] Command add_tune_command(CLI::App& app);
[[nodiscard]] Command add_sweep_command(CLI::App& app);
[[nodiscard]] Command add_report_command(CLI::App& app);
[[nodiscard]] Command add_place_command(CLI::App& app);
[[nodiscard]] Command add_job_command(CLI::App& app);
[[nodiscard]] Command add_batch_worker_command(CLI::App& app);

}  // namespace exasim::cli
