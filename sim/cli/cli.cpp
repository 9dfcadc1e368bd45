#include "sim/cli/cli.hpp"

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

#include <ostream>

namespace exasim::cli {

namespace {
constexpr int kExitInput = 2;
constexpr int kExitBug = 1;
}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"exasim: predicts and explains LLM training iterations on GPU supercomputers", "exasim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "exasim 0.1.0");

  const std::vector<Command> commands = {
      add_simulate_command(app), add_topo_command(app),         add_roofline_command(app),  add_presets_command(app),
      add_emulate_command(app),  add_validate_command(app),     add_calibrate_command(app), add_tune_command(app),
      add_sweep_command(app),    add_batch_worker_command(app),
  };

  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::Success& e) {
    app.exit(e, out, err);
    return 0;
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitInput;
  }

  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.action(out, err);
    }
    return kExitBug;  // unreachable: require_subcommand(1) guarantees one parsed
  } catch (const InputError& e) {
    err << "exasim: error: " << e.what() << "\n";
    return kExitInput;
  } catch (const std::exception& e) {
    err << "exasim: internal error (please report): " << e.what() << "\n";
    return kExitBug;
  }
}

}  // namespace exasim::cli
