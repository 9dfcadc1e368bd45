// The page of `exasim job --out` (job.json, sim/api/job_views.cpp): the run's figures as cards, goodput
// over the checkpoint interval with Young's, Daly's and the searched interval marked, and the what-if
// table (docs/job.md).

#include "sim/core/json_view.hpp"
#include "sim/html/internal/page.hpp"
#include "sim/html/internal/svg.hpp"
#include "sim/html/report_page.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace exasim::html::internal {

namespace {

/// A marker on the goodput curve: its own series, a value at its interval only.
struct Marker {
  const char* label;
  const char* colour;
  double interval_s, goodput;
};

}  // namespace

std::string job_page(const std::filesystem::path& dir, ReportPage& out) {
  const auto path = dir / "job.json";
  const auto doc = read_json_file(path.string());
  const JsonView j(doc, path.string(), "");
  out.title = j.string("scenario");
  const auto checkpoint = j.object("checkpoint");
  Page page;
  page.body += "<section id=\"job\"><h2>The training run</h2><div class=\"cards\">";
  page.body += card("job-days", fmt("%.2f", j.number("time_to_train_days", 0, kBig)) + " days", "time to train");
  page.body += card("job-goodput", fmt("%.4f", j.number("goodput", 0, 1)), "goodput");
  page.body += card("job-energy", fmt("%.1f", j.number("energy_MWh", 0, kBig, false)) + " MWh", "energy");
  if (j.number("cost_usd", 0, kBig, false) > 0)
    page.body += card("job-cost", fmt("%.0f", j.number("cost_usd", 0, kBig, false)) + " USD", "cost");
  page.body += card("job-iteration", duration(j.number("straggler_iteration_s", 0, kBig)), "iteration (stragglers)");
  page.body += card("job-checkpoint", bytes(checkpoint.number("state_bytes", 0, kBig, false)), "checkpoint");
  page.body += "</div>";

  std::vector<std::pair<double, double>> curve, simulated;  // (interval, goodput): the model's, the runs'
  if (j.has("goodput_curve") && j.json().at("goodput_curve").is_array()) {
    for (std::size_t i = 0; i < j.json().at("goodput_curve").size(); ++i) {
      const JsonView p(j.json().at("goodput_curve").at(i), j.source(), "goodput_curve[" + std::to_string(i) + "]");
      curve.emplace_back(p.number("interval_s", 0, kBig), p.number("goodput", 0, 1));
      if (p.has("simulated_goodput")) simulated.emplace_back(curve.back().first, p.number("simulated_goodput", 0, 1));
    }
  }
  if (!curve.empty() && checkpoint.number("young_s", 0, kBig, false) > 0) {
    const Marker markers[] = {
        {"Young", "#e4572e", checkpoint.number("young_s", 0, kBig), checkpoint.number("young_goodput", 0, 1)},
        {"Daly", "#2e86ab", checkpoint.number("daly_s", 0, kBig), checkpoint.number("daly_goodput", 0, 1)},
        {"optimum (searched)", "#a0c040", checkpoint.number("optimum_s", 0, kBig),
         checkpoint.number("optimum_goodput", 0, 1)},
        {"optimum (simulated runs)", "#8e44ad", checkpoint.number_or("simulated_optimum_s", 0, 0, kBig, false),
         checkpoint.number_or("simulated_optimum_goodput", 0, 0, 1, false)}};
    // The markers' intervals join the curve's x values, so each sits on the line at its own interval
    // (inside the curve's range only: Young's may fall below the shortest interval allowed).
    std::vector<std::pair<double, double>> points = curve;
    for (const auto& m : markers)
      if (m.interval_s > 0 && m.interval_s >= curve.front().first && m.interval_s <= curve.back().first)
        points.emplace_back(m.interval_s, m.goodput);
    std::sort(points.begin(), points.end());
    points.erase(
        std::unique(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
        points.end());
    std::vector<double> x, y;
    for (const auto& [tau, g] : points) x.push_back(tau), y.push_back(100 * g);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<Series> series{{"goodput", "#3d5a80", y}};
    if (!simulated.empty()) {
      Series runs{"goodput of simulated runs", "#9aa5b1", std::vector<double>(x.size(), nan)};
      for (const auto& [tau, g] : simulated) {
        const auto at = std::find(x.begin(), x.end(), tau);
        if (at != x.end()) runs.y[static_cast<std::size_t>(at - x.begin())] = 100 * g;
      }
      series.push_back(std::move(runs));
    }
    for (const auto& m : markers) {
      if (!(m.interval_s > 0)) continue;  // no simulated optimum in an older job.json
      Series s{m.label, m.colour, std::vector<double>(x.size(), nan)};
      const auto at = std::find(x.begin(), x.end(), m.interval_s);
      if (at != x.end()) s.y[static_cast<std::size_t>(at - x.begin())] = 100 * m.goodput;
      series.push_back(std::move(s));
    }
    page.chart("job-goodput-interval", line_chart("job-goodput-interval", "Goodput over the checkpoint interval",
                                                  "percent", x, {}, "checkpoint interval (s)", series, true));
    page.body +=
        "<p class=\"note\">Goodput: the share of the elapsed time spent on steps that count, from Daly's "
        "expected-time model (docs/job.md). Young's and Daly's intervals are closed forms; the optimum is "
        "searched, in whole steps. The grey line and the simulated optimum come from running the job's "
        "timeline with random failures many times (the same failure model, no closed form).</p>";
  } else {
    page.notes.push_back("job: no failures, so no checkpoint interval to chart");
  }

  std::string table =
      "<h2>What each effect costs</h2><table id=\"job-table\"><tr><th>run</th><th>days</th><th>goodput</th>"
      "<th>energy MWh</th><th>cost USD</th></tr>";
  if (!j.has("what_if") || !j.json().at("what_if").is_array())
    j.fail("what_if", "must be a list of rows (exasim job --out writes it)");
  for (std::size_t i = 0; i < j.json().at("what_if").size(); ++i) {
    const JsonView r(j.json().at("what_if").at(i), j.source(), "what_if[" + std::to_string(i) + "]");
    table += "<tr><td>" + escape(r.string("name")) + "</td><td>" + fmt("%.2f", r.number("days", 0, kBig, false)) +
             "</td><td>" + fmt("%.4f", r.number("goodput", 0, 1, false)) + "</td><td>" +
             fmt("%.1f", r.number("energy_MWh", 0, kBig, false)) + "</td><td>" +
             fmt("%.0f", r.number("cost_usd", 0, kBig, false)) + "</td></tr>";
  }
  page.body += table + "</table></section>\n";
  out.charts = page.charts;
  out.notes = page.notes;
  return document(out.title,
                  "exasim job: " + std::to_string(j.integer("gpus", 1)) + " GPUs, " +
                      std::to_string(j.integer("steps", 1)) + " steps",
                  page);
}

}  // namespace exasim::html::internal
