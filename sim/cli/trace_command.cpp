// `exasim trace summarize FILE...`: what a measured trace (Kineto JSON / .json.gz, or exasim's own
// trace.csv) contains: steps, kernels, busy time, kernel classes, collectives (traces/trace_summary.hpp).
#include "sim/cli/command.hpp"

#include "traces/measured.hpp"
#include "traces/trace_summary.hpp"

#include <memory>
#include <ostream>

namespace exasim::cli {

Command add_trace_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> files;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("trace", "Read measured traces (PyTorch profiler / Kineto, exasim trace.csv)");
  cmd->require_subcommand(1);
  cmd->footer("exasim trace compare MEASURED... --scenario SCEN is exasim compare (exasim help compare).");
  auto* summarize = cmd->add_subcommand("summarize", "Steps, kernels, busy time, kernel classes and collectives");
  summarize->add_option("files", o->files, "Kineto trace (.json or .json.gz, one per rank) or exasim trace.csv")
      ->required();
  summarize->add_flag("--json", o->json, "Print one JSON object: {files: [...], total: {...}}");
  return {cmd, [o](std::ostream& out, std::ostream&) {
            std::vector<trace::TraceSummary> summaries;
            for (const auto& file : o->files)
              for (const auto& measured : trace::read_measured(file)) summaries.push_back(trace::summarize(measured));
            const auto sum = trace::total(summaries);
            if (o->json) {
              nlohmann::json j{{"files", nlohmann::json::array()}, {"total", trace::to_json(sum)}};
              for (const auto& s : summaries) j["files"].push_back(trace::to_json(s));
              out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
              return 0;
            }
            for (const auto& s : summaries) trace::print_summary(out, s);
            if (summaries.size() > 1) trace::print_summary(out, sum);
            return 0;
          }};
}

}  // namespace exasim::cli
