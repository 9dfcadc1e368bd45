// The page of `exasim place --out` (sim/cli/place_command.cpp): place.csv (every simulated placement),
// scenario.json (the plan's scenario, which names the job) and place_network.json (where the plan and
// its baseline put the ranks and what the network carried; sim/cli/place_network.hpp).

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/html/internal/page.hpp"
#include "sim/html/internal/svg.hpp"
#include "sim/html/report_page.hpp"

#include <algorithm>
#include <cstdlib>

namespace exasim::html::internal {

namespace {

struct Placement {
  std::string label;
  bool baseline = false;
  double analytic = 0, simulated = 0, peak = -1, mfu = -1;  ///< peak, mfu: -1 in a place.csv without them
};

const std::vector<std::string> kPlaceColumns = {"placement", "baseline", "analytic_iteration_s", "iteration_time_s"};

std::vector<Placement> read_place_csv(const std::filesystem::path& csv) {
  // Written before place.csv had the % of peak and MFU columns: the four first alone.
  auto with_figures = kPlaceColumns;
  with_figures.insert(with_figures.end(), {"percent_of_peak", "mfu_percent"});
  const auto t = report::read_csv_table(csv.string());
  const bool figures = t.header == with_figures;
  if (!figures && t.header != kPlaceColumns)
    throw InputError(csv.string(), "line 1",
                     "expected the header " + report::csv_line(with_figures) + " (or without its last two columns)");
  t.require_width();
  if (t.rows.empty())
    throw InputError(csv.string(), "", "has no placement: exasim place --out writes one row per simulated placement");
  std::vector<Placement> out;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& baseline = t.cell(i, "baseline");
    if (baseline != "0" && baseline != "1")
      throw InputError(csv.string(), "row " + std::to_string(i + 1) + " baseline",
                       "must be 0 or 1, not '" + baseline + "'");
    out.push_back({t.cell(i, "placement"), baseline == "1", t.number(i, "analytic_iteration_s"),
                   t.number(i, "iteration_time_s"), figures ? t.number(i, "percent_of_peak") : -1,
                   figures ? t.number(i, "mfu_percent") : -1});
  }
  return out;
}

/// Eight hues for blocks of ranks: a group's colour says which part of the job sits in it.
constexpr const char* kRankColours[] = {"#3d5a80", "#e4572e", "#2e86ab", "#a0c040",
                                        "#b5179e", "#f3a712", "#6a8caf", "#8a5a44"};

/// The groups of the machine as a grid of squares, each coloured by the block of ranks its first rank
/// falls in, darker the more of its GPUs the job holds; empty groups pale.
std::string group_map(const std::string& id, const JsonView& placement, const std::vector<double>& group_gpus,
                      double ranks_total) {
  const std::size_t groups = group_gpus.size(), per_row = std::min<std::size_t>(groups, 20);
  const double cell = 24, height = cell * static_cast<double>((groups + per_row - 1) / per_row) + 4,
               width = cell * static_cast<double>(per_row) + 4;
  std::vector<std::string> fill(groups, "#eef2f6"), tip(groups);
  std::vector<double> opacity(groups, 1);
  for (std::size_t g = 0; g < groups; ++g) tip[g] = "group " + std::to_string(g) + ": none of the job's ranks";
  const auto& list = placement.json().at("groups");
  if (!list.is_array()) placement.fail("groups", "must be a list of the groups holding ranks");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const JsonView e(list[i], placement.source(), placement.path() + ".groups[" + std::to_string(i) + "]");
    const auto g = static_cast<std::size_t>(e.integer("group", 0, static_cast<std::int64_t>(groups) - 1));
    const double ranks = e.number("ranks", 0, kBig);
    const std::string ranges = e.string("rank_ranges");
    const double first = std::strtod(ranges.c_str(), nullptr);
    const auto block = static_cast<std::size_t>(std::min(7.0, 8 * first / std::max(1.0, ranks_total)));
    fill[g] = kRankColours[block];
    opacity[g] = 0.35 + 0.65 * std::min(1.0, group_gpus[g] > 0 ? ranks / group_gpus[g] : 1);
    tip[g] = "group " + std::to_string(g) + ": " + fmt("%.0f", ranks) + " of its " + fmt("%.0f", group_gpus[g]) +
             " GPUs, ranks " + ranges;
  }
  std::string s = "<svg id=\"" + id + "\" class=\"chart\" style=\"max-width:" + fmt("%.0f", width) +
                  "px\" viewBox=\"0 0 " + fmt("%.0f", width) + " " + fmt("%.0f", height) + "\" role=\"img\">";
  for (std::size_t g = 0; g < groups; ++g) {
    const double x = 2 + cell * static_cast<double>(g % per_row), y = 2 + cell * static_cast<double>(g / per_row);
    s += "<rect x=\"" + fmt("%.0f", x) + "\" y=\"" + fmt("%.0f", y) + "\" width=\"" + fmt("%.0f", cell - 2) +
         "\" height=\"" + fmt("%.0f", cell - 2) + "\" fill=\"" + fill[g] + "\" fill-opacity=\"" +
         fmt("%.2f", opacity[g]) + "\"><title>" + escape(tip[g]) + "</title></rect>";
  }
  return s + "</svg>";
}

/// The placement's hot links as bar rows (utilisation in percent), labelled with `who`.
void hot_link_rows(const JsonView& placement, const std::string& who, const char* colour, std::vector<Segment>& rows) {
  const auto& list = placement.json().at("hot_links");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const JsonView h(list[i], placement.source(), placement.path() + ".hot_links[" + std::to_string(i) + "]");
    const double u = h.number("utilisation", 0, kBig, false);
    rows.push_back({who + ": " + h.string("from") + " -> " + h.string("to") + " [" + h.string("class") + "]", colour,
                    100 * u, fmt("%.1f%%", 100 * u) + ", " + bytes(h.number("bytes", 0, kBig, false))});
  }
}

void network_section(Page& page, const std::filesystem::path& path) {
  const auto doc = read_json_file(path.string());
  const JsonView n(doc, path.string(), "");
  const auto plan = n.object("plan");
  // The baseline beside the plan, unless the plan is the baseline.
  const bool has_baseline = n.has("baseline") && n.json().at("baseline").is_object() &&
                            n.object("baseline").string("placement") != plan.string("placement");
  const std::string plan_name = "plan (" + plan.string("placement") + ")";
  page.body += "<section id=\"place-network\"><h2>The network under the plan";
  std::string baseline_name;
  if (has_baseline) {
    baseline_name = n.object("baseline").string("placement");
    page.body += " and under " + escape(baseline_name);
  }
  page.body += "</h2>";
  if (!has_baseline && n.has("baseline") && n.json().at("baseline").is_object())
    page.body += "<p class=\"note\">The plan is the baseline (" + escape(plan.string("placement")) + ").</p>";
  const bool metered = plan.json().contains("hot_links") && plan.json().at("hot_links").is_array();
  if (metered) {
    std::vector<Segment> rows;
    hot_link_rows(plan, "plan", "#2e86ab", rows);
    if (has_baseline && n.object("baseline").json().at("hot_links").is_array())
      hot_link_rows(n.object("baseline"), baseline_name, "#b0b0b0", rows);
    page.body += "<h2>The hottest links (utilisation: bytes over what the link could carry in the iteration)</h2>";
    page.chart("place-hot-links", bar_chart("place-hot-links", rows, 0, "utilisation (percent)"));
    // The busiest group pairs side by side.
    const auto pairs = [&](const JsonView& p) {
      std::vector<std::string> out;
      const auto& list = p.json().at("hot_group_pairs");
      for (std::size_t i = 0; list.is_array() && i < list.size(); ++i) {
        const JsonView e(list[i], p.source(), p.path() + ".hot_group_pairs[" + std::to_string(i) + "]");
        out.push_back("group " + fmt("%.0f", e.number("from", 0, kBig, false)) + " -> group " +
                      fmt("%.0f", e.number("to", 0, kBig, false)) + ": " + bytes(e.number("bytes", 0, kBig, false)));
      }
      return out;
    };
    const auto plan_pairs = pairs(plan);
    const auto base_pairs = has_baseline ? pairs(n.object("baseline")) : std::vector<std::string>{};
    if (!plan_pairs.empty() || !base_pairs.empty()) {
      page.body +=
          "<h2>The busiest group pairs (bytes on the global links from one group to another)</h2>"
          "<table id=\"place-group-pairs\"><tr><th></th><th>" +
          escape(plan_name) + "</th>" + (has_baseline ? "<th>" + escape(baseline_name) + "</th>" : "") + "</tr>";
      for (std::size_t i = 0; i < std::max(plan_pairs.size(), base_pairs.size()); ++i)
        page.body += "<tr><td>" + std::to_string(i + 1) + "</td><td>" +
                     (i < plan_pairs.size() ? escape(plan_pairs[i]) : "") + "</td>" +
                     (has_baseline ? "<td>" + (i < base_pairs.size() ? escape(base_pairs[i]) : "") + "</td>" : "") +
                     "</tr>";
      page.body += "</table>";
    }
  } else {
    page.body +=
        "<p class=\"note\">Links not metered (layer sampling): simulate this folder's scenario.json with --set "
        "simulation.sample_layers=0 --links 5 to see them.</p>";
    page.notes.push_back("place: no hot links (the simulations were layer-sampled)");
  }
  // The group map.
  std::vector<double> group_gpus;
  if (n.has("group_gpus") && n.json().at("group_gpus").is_array())
    for (const auto& v : n.json().at("group_gpus")) group_gpus.push_back(v.is_number() ? v.get<double>() : 0);
  if (group_gpus.size() <= 1) {
    page.body += "<p class=\"note\">No group map: this network has one group.</p></section>\n";
    return;
  }
  double ranks_total = 0;
  for (const auto& g : plan.json().at("groups"))
    if (g.is_object() && g.contains("ranks") && g.at("ranks").is_number()) ranks_total += g.at("ranks").get<double>();
  page.body += "<h2>Where the ranks sit: the " + std::to_string(group_gpus.size()) +
               " network groups</h2><p class=\"note\">One square per group, in group order, 20 to a row. A "
               "group's colour is the block of ranks its first rank falls in (eighths of the job: ";
  for (std::size_t b = 0; b < 8; ++b)
    page.body += std::string(b ? ", " : "") + "<span style=\"color:" + kRankColours[b] + "\">&#9632;</span> " +
                 fmt("%.0f", b * ranks_total / 8) + "-" + fmt("%.0f", (b + 1) * ranks_total / 8 - 1);
  page.body +=
      "), darker the more of its GPUs the job holds; pale groups hold none. Hover a group for its ranks."
      "</p><h2>" +
      escape(plan_name) + "</h2>";
  page.chart("place-group-map", group_map("place-group-map", plan, group_gpus, ranks_total));
  if (has_baseline) {
    page.body += "<h2>" + escape(baseline_name) + " (baseline)</h2>";
    page.chart("place-group-map-baseline",
               group_map("place-group-map-baseline", n.object("baseline"), group_gpus, ranks_total));
  }
  page.body += "</section>\n";
}

}  // namespace

std::string place_page(const std::filesystem::path& dir, ReportPage& out) {
  auto placements = read_place_csv(dir / "place.csv");
  std::stable_sort(placements.begin(), placements.end(),
                   [](const Placement& a, const Placement& b) { return a.simulated < b.simulated; });
  // Titled with the job of scenario.json (the plan's scenario); its name when it does not load.
  std::string name = "place";
  const std::string job = job_title(dir / "scenario.json", &name);
  out.title = job.empty() ? name : job;
  // The baseline the change is against: packed on the whole machine, the scheduler's order with --nodes.
  const Placement* reference = nullptr;
  for (const char* label : {"packed", "scheduler"})
    for (const auto& p : placements)
      if (reference == nullptr && p.baseline && p.label == label) reference = &p;
  const auto change = [&](const Placement& p) {
    return reference == nullptr ? std::string() : fmt("%+.1f%%", 100 * (p.simulated / reference->simulated - 1));
  };
  const bool figures = placements.front().peak >= 0;
  const Placement& plan = placements.front();
  Page page;
  page.body += "<section id=\"place\"><h2>Place: the simulated placements, fastest first</h2><div class=\"cards\">";
  page.body += card("plan", plan.label, "the plan (placement.txt)");
  page.body += card("iteration-time", fmt("%.4f s", plan.simulated), "its iteration time");
  if (reference != nullptr) page.body += card("change", change(plan), "against " + reference->label);
  if (figures) {
    page.body += card("percent-of-peak", fmt("%.1f%%", plan.peak), "of peak (hardware flops)");
    page.body += card("mfu", fmt("%.1f%%", plan.mfu), "MFU (model flops)");
  }
  page.body += card("placements-simulated", std::to_string(placements.size()), "placements simulated") + "</div>";
  std::vector<Segment> bars;
  for (std::size_t i = 0; i < placements.size(); ++i) {
    const auto& p = placements[i];
    bars.push_back({std::to_string(i + 1) + ". " + p.label + (p.baseline ? " (baseline)" : ""),
                    i == 0       ? "#2e86ab"
                    : p.baseline ? "#b0b0b0"
                                 : "#98c1d9",
                    p.simulated, fmt("%.4f s", p.simulated)});
  }
  page.chart("place-ranking", bar_chart("place-ranking", bars, 0, "simulated iteration time (seconds)"));
  page.body +=
      "<table id=\"place-table\"><tr><th>placement</th><th>baseline</th><th>analytic s</th><th>simulated s</th>" +
      std::string(figures ? "<th>% peak</th><th>MFU %</th>" : "") + "<th>" +
      (reference == nullptr ? std::string("change") : "vs " + escape(reference->label)) + "</th></tr>";
  for (const auto& p : placements)
    page.body += "<tr><td>" + escape(p.label) + "</td><td>" + (p.baseline ? "yes" : "") + "</td><td>" +
                 fmt("%.4f", p.analytic) + "</td><td>" + fmt("%.4f", p.simulated) + "</td>" +
                 (figures ? "<td>" + fmt("%.1f", p.peak) + "</td><td>" + fmt("%.1f", p.mfu) + "</td>" : "") + "<td>" +
                 change(p) + "</td></tr>";
  page.body +=
      "</table><p>Ranked by simulated iteration time; the analytic seconds are the search's score (docs/place.md). "
      "<code>exasim simulate</code> on this folder's scenario.json runs the plan.</p></section>\n";
  if (reference == nullptr) page.notes.push_back("place: no packed or scheduler baseline, so no change is shown");
  if (!figures) page.notes.push_back("place: no % of peak or MFU (place.csv written by an older exasim)");
  if (std::error_code ec; std::filesystem::is_regular_file(dir / "place_network.json", ec))
    network_section(page, dir / "place_network.json");
  else
    page.notes.push_back("place: no hot links or group map (no place_network.json: written by an older exasim)");
  out.charts = page.charts;
  out.notes = page.notes;
  return document(out.title,
                  "exasim place" + (job.empty() || name == "place" ? std::string() : " of " + name) + ": " +
                      std::to_string(placements.size()) + " placements simulated",
                  page);
}

}  // namespace exasim::html::internal
