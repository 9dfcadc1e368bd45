// `exasim report DIR [--out FILE.html]`: one self-contained HTML page from the folder `simulate --out`,
// `sweep --out`, `tune --out` or `place --out` wrote (sim/html/report_page.hpp; docs/report.md). The page goes to
// DIR/report.html unless --out names another file; it is written through OutputFiles, so a failed run
// leaves no half-written page.

#include "sim/cli/command.hpp"

#include "sim/core/error.hpp"
#include "sim/core/output_files.hpp"
#include "sim/html/report_page.hpp"

#include <filesystem>
#include <memory>
#include <ostream>

namespace exasim::cli {

Command add_report_command(CLI::App& app) {
  struct Options {
    std::string dir, out_file;
    std::size_t max_blocks = html::ReportOptions{}.max_timeline_blocks;
    std::size_t max_ranks = html::ReportOptions{}.max_timeline_ranks;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page (charts, timeline, links) from a simulate, sweep, tune or place --out "
      "folder (docs/report.md)");
  cmd->add_option("dir", o->dir, "Folder written by exasim simulate, sweep, tune or place --out")->required();
  cmd->add_option("--out", o->out_file, "The page to write (default DIR/report.html)");
  cmd->add_option("--max-events", o->max_blocks, "Timeline: most blocks drawn over all ranks (merged beyond)")
      ->capture_default_str();
  cmd->add_option("--max-ranks", o->max_ranks, "Timeline: most ranks drawn (the first traced ones)")
      ->capture_default_str();
  return {cmd, [o, cmd](std::ostream& out, std::ostream&) {
            if (o->max_blocks < 100 || o->max_blocks > 1000000)
              throw InputError("--max-events", std::to_string(o->max_blocks), "must be in [100, 1000000]");
            if (o->max_ranks < 1 || o->max_ranks > 256)
              throw InputError("--max-ranks", std::to_string(o->max_ranks), "must be in [1, 256]");
            const std::filesystem::path dir = o->dir;
            std::filesystem::path file = dir / "report.html";
            if (cmd->count("--out") > 0) {
              file = o->out_file;
              if (o->out_file.empty() || !file.has_filename())
                throw InputError("--out", o->out_file, "must name a file, e.g. report.html");
            }
            // Checked before anything is made: a folder that is not one must not get a report.html.
            (void)html::detect_folder(dir);
            const auto parent = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
            OutputFiles files("--out", parent, {file.filename().string()});
            const auto page = html::render_report(dir, {o->max_blocks, o->max_ranks});
            files.stage_text(file.filename().string(), page.html);
            files.commit();
            out << "exasim report: " << page.title << " (a " << html::to_string(page.kind) << " folder)\n";
            out << "  charts:";
            for (const auto& id : page.charts) out << ' ' << id;
            out << "\n";
            if (page.trace_rows > 0)
              out << "  timeline: " << page.timeline_blocks << " blocks for " << page.trace_rows << " trace rows\n";
            for (const auto& note : page.notes) out << "  note: " << note << "\n";
            out << "  wrote " << file.string() << "\n";
            return 0;
          }};
}

}  // namespace exasim::cli
