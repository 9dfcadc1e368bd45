// The page of `exasim tune --out` (tune.csv, sim/tune/tune_csv.hpp; best.json names the job).

#include "sim/core/error.hpp"
#include "sim/html/internal/page.hpp"
#include "sim/html/internal/svg.hpp"
#include "sim/html/report_page.hpp"
#include "sim/tune/tune_csv.hpp"

#include <algorithm>

namespace exasim::html::internal {

std::string tune_page(const std::filesystem::path& dir, ReportPage& out) {
  const auto csv = dir / "tune.csv";
  const auto table = tune::read_tune_csv(csv.string());
  if (table.rows.empty())
    throw InputError(csv.string(), "", "has no grid: exasim tune --out writes one row per grid that fits");
  // Titled with the job (best.json: the best configuration's resolved scenario); a folder without one
  // (nothing simulated) falls back to "tune".
  std::string name = "tune";
  const std::string job = job_title(dir / "best.json", &name);
  out.title = job.empty() ? name : job;
  struct Grid {
    std::string label;
    double analytic = 0, memory = 0, simulated = -1, peak = 0, tflops = 0, mfu = -1;
  };
  // A configuration as exasim tune prints it: "gx=2 gy=4 gz=8 gdata=16", with the scheme in front when
  // the table mixes schemes.
  std::vector<Grid> grids;
  for (const auto& row : table.rows) {
    const auto& c = row.candidate;
    Grid g{tune::row_label(c, table.alone), c.analytic_s, c.memory_bytes};
    if (row.simulated) {
      g.simulated = row.simulated->iteration_time_s;
      g.peak = row.simulated->percent_of_peak;
      g.tflops = row.simulated->tflops_per_gpu;
      g.mfu = row.simulated->mfu_percent;
    }
    grids.push_back(g);
  }
  const auto mfu_text = [](const Grid& g, const char* format) { return g.mfu >= 0 ? fmt(format, g.mfu) : "-"; };
  std::vector<Grid> simulated;
  for (const auto& g : grids)
    if (g.simulated >= 0) simulated.push_back(g);
  std::stable_sort(simulated.begin(), simulated.end(),
                   [](const Grid& a, const Grid& b) { return a.simulated < b.simulated; });
  const std::string what(table.alone ? table.alone->candidate_noun : "configuration");
  Page page;
  page.body += "<section id=\"tune\"><h2>Tune: the simulated " + what + "s, fastest first</h2><div class=\"cards\">";
  if (!simulated.empty()) {
    page.body += card("best-grid", simulated.front().label, "best " + what);
    page.body += card("iteration-time", fmt("%.4f s", simulated.front().simulated), "its iteration time");
    page.body += card("percent-of-peak", fmt("%.1f%%", simulated.front().peak), "of peak (hardware flops)");
    page.body += card("mfu", mfu_text(simulated.front(), "%.1f%%"), "MFU (model flops)");
  }
  page.body += card("grids-fitting", std::to_string(grids.size()), what + "s that fit") + "</div>";
  page.body +=
      "<p class=\"note\" id=\"tune-ranking-note\">Ranked by simulated iteration time, fastest first: tune "
      "simulates the best " +
      std::to_string(simulated.size()) + " of the " + std::to_string(grids.size()) + " " + what +
      "s by the analytic estimate, and the simulation decides. % of peak counts the flops the GPUs ran "
      "(recomputation included); MFU (model FLOPs utilization) counts the model's flops alone, so it "
      "compares configurations that recompute differently.</p>";
  std::vector<Segment> bars;
  for (std::size_t i = 0; i < simulated.size(); ++i)
    bars.push_back({std::to_string(i + 1) + ". " + simulated[i].label, i == 0 ? "#2e86ab" : "#98c1d9",
                    simulated[i].simulated,
                    fmt("%.4f s", simulated[i].simulated) + ", " + fmt("%.1f%% of peak", simulated[i].peak) +
                        (simulated[i].mfu >= 0 ? fmt(", MFU %.1f%%", simulated[i].mfu) : "")});
  if (!bars.empty())
    page.chart("tune-ranking", bar_chart("tune-ranking", bars, 0, "simulated iteration time (seconds)"));
  else
    page.notes.push_back("tune: no " + what + " was simulated");
  if (!simulated.empty() && simulated.front().mfu < 0)
    page.notes.push_back("tune: no MFU (tune.csv has no mfu_percent column: written by an older exasim)");
  page.body += "<h2>Every " + what + " that fits, in the analytic order</h2><table id=\"tune-table\"><tr><th>" + what +
               "</th><th>analytic s</th><th>memory per GPU</th><th>simulated s</th><th>% peak</th><th>MFU "
               "%</th><th>TFLOP/s/GPU</th></tr>";
  for (const auto& g : grids) {
    const bool sim = g.simulated >= 0;
    page.body += "<tr><td>" + escape(g.label) + "</td><td>" + fmt("%.4f", g.analytic) + "</td><td>" + bytes(g.memory) +
                 "</td><td>" + (sim ? fmt("%.4f", g.simulated) : "") + "</td><td>" + (sim ? fmt("%.1f", g.peak) : "") +
                 "</td><td>" + (sim ? mfu_text(g, "%.1f") : "") + "</td><td>" + (sim ? fmt("%.1f", g.tflops) : "") +
                 "</td></tr>";
  }
  page.body += "</table></section>\n";
  out.charts = page.charts;
  out.notes = page.notes;
  return document(out.title,
                  "exasim tune" + (job.empty() || name == "tune" ? std::string() : " of " + name) + ": " +
                      std::to_string(grids.size()) + " " + what + "s fit, " + std::to_string(simulated.size()) +
                      " simulated" +
                      (table.alone ? "" : " (" + scenario::scheme_list(&scenario::Scheme::title) + " as searched)"),
                  page);
}

}  // namespace exasim::html::internal
