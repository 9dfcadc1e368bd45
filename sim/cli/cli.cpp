#include "sim/cli/cli.hpp"

#include <unistd.h>

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <ostream>

namespace exasim::cli {

namespace {
// Exit codes (docs/reliability.md): 0 done, 1 a bug in exasim, 2 bad input, 3 the environment failed
// the run (out of memory, no process could be forked, standard output not writable).
constexpr int kExitInput = 2;
constexpr int kExitBug = 1;
constexpr int kExitEnvironment = 3;

int run_command(const std::vector<Command>& commands, std::ostream& out, std::ostream& err) {
  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.action(out, err);
    }
    return kExitBug;  // unreachable: require_subcommand(1) guarantees one parsed
  } catch (const InputError& e) {
    err << "exasim: error: " << e.what() << "\n";
    return kExitInput;
  } catch (const EnvironmentError& e) {
    err << "exasim: error: " << e.what() << "\n";
    return kExitEnvironment;
  } catch (const std::bad_alloc&) {
    err << "exasim: error: out of memory (the run needs more memory than the process may use: a smaller "
           "scenario, fewer points or a higher ulimit -v)\n";
    return kExitEnvironment;
  } catch (const std::exception& e) {
    err << "exasim: internal error (please report): " << e.what() << "\n";
    return kExitBug;
  }
}

// A command that printed into a full disk or a closed pipe must not exit 0 as if its output were whole.
int check_stdout(std::ostream& out, std::ostream& err, int code) {
  if (&out != &std::cout) return code;
  const bool failed_earlier = !out;
  errno = 0;
  out.flush();
  const bool failed = !out || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return code;
  int e = errno;
  // A write that failed while the command ran left no errno to read now (later calls overwrote it): one
  // more byte to the same descriptor, already broken, fails again and says why.
  if (failed_earlier && e == 0 && ::write(STDOUT_FILENO, "\n", 1) < 0) e = errno;
  err << "exasim: cannot write standard output: " << (e != 0 ? std::strerror(e) : "write error") << "\n";
  return code == 0 ? kExitEnvironment : code;
}
}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"exasim: predicts and explains LLM training iterations on GPU supercomputers", "exasim"};
  app.require_subcommand(1);
  app.set_version_flag("--version,-V", "exasim 0.1.0");
  app.footer("Run 'exasim help COMMAND' (or exasim COMMAND --help) for a command's options.");
  // Every parse error as every other error: "exasim: error: ..." and a pointer to the help.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "exasim: error: " + std::string(e.what()) + "\nRun 'exasim --help' or 'exasim help COMMAND' for more.\n";
  });

  const std::vector<Command> commands = {
      add_simulate_command(app), add_topo_command(app),     add_roofline_command(app),     add_presets_command(app),
      add_emulate_command(app),  add_validate_command(app), add_calibrate_command(app),    add_trace_command(app),
      add_compare_command(app),  add_tune_command(app),     add_sweep_command(app),        add_report_command(app),
      add_place_command(app),    add_job_command(app),      add_batch_worker_command(app),
  };

  // `exasim help [COMMAND]`, and a command name CLI11 would only call "a subcommand is required".
  const auto find_command = [&](const std::string& name) -> CLI::App* {
    for (const auto& command : commands)
      if (command.app->get_name() == name) return command.app;
    return nullptr;
  };
  const auto command_names = [&] {
    std::string names;
    for (const auto& command : commands)  // hidden ones (the batch worker) have no group
      if (!command.app->get_group().empty()) names += (names.empty() ? "" : ", ") + command.app->get_name();
    return names;
  };
  if (args.size() >= 2 && args[1] == "help") {
    if (args.size() == 2) {
      out << app.help();
      return 0;
    }
    if (CLI::App* command = find_command(args[2]); command != nullptr && args.size() == 3) {
      out << command->help();
      return 0;
    }
    err << "exasim: error: help: " << (args.size() > 3 ? "one command at a time" : "unknown command '" + args[2] + "'")
        << " (commands: " << command_names() << ")\n";
    return kExitInput;
  }
  if (args.size() >= 2 && !args[1].empty() && args[1][0] != '-' && find_command(args[1]) == nullptr) {
    err << "exasim: error: unknown command '" << args[1] << "' (commands: " << command_names()
        << "; exasim help lists them)\n";
    return kExitInput;
  }

  // `exasim trace compare ...` is `exasim compare ...`: compare reads traces too, and users look for it
  // beside `trace summarize`.
  std::vector<std::string> words = args;
  if (words.size() >= 3 && words[1] == "trace" && words[2] == "compare") words.erase(words.begin() + 1);
  std::vector<const char*> argv;
  for (const auto& a : words) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::Success& e) {
    app.exit(e, out, err);
    return 0;
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitInput;
  }

  // A file past `ulimit -f` then fails its write with EFBIG, which the writer reports, instead of
  // killing the process with a half-written file behind.
  std::signal(SIGXFSZ, SIG_IGN);
  return check_stdout(out, err, run_command(commands, out, err));
}

}  // namespace exasim::cli
