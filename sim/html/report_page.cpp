#include "sim/html/report_page.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/html/internal/assets.hpp"
#include "sim/html/internal/svg.hpp"
#include "sim/html/internal/timeline.hpp"
#include "sim/report/csv_table.hpp"
#include "sim/tune/tune_csv.hpp"
#include "traces/trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace exasim::html {

namespace fs = std::filesystem;
using namespace internal;

namespace {

constexpr double kBig = 1e30;  // JSON figures are checked finite and non-negative, no tighter
constexpr std::size_t kHottestLinks = 10;

/// What a page is made of: sections of HTML, the chart ids in order, notes.
struct Page {
  std::string body;
  std::vector<std::string> charts, notes;
  void chart(const std::string& id, const std::string& svg) {
    charts.push_back(id);
    body += svg;
  }
};

std::string card(const std::string& id, const std::string& value, const std::string& key) {
  return "<div class=\"card\"><div class=\"v\" id=\"" + id + "\">" + escape(value) + "</div><div class=\"k\">" +
         escape(key) + "</div></div>";
}

std::string percent(double part, double whole) { return whole > 0 ? fmt("%.1f%%", 100 * part / whole) : "-"; }

std::string document(const std::string& title, const std::string& subtitle, const Page& page) {
  std::string notes;
  for (const auto& n : page.notes) notes += "<li>" + escape(n) + "</li>";
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>exasim report: " +
         escape(title) + "</title>\n<style>" + page_css() +
         "</style>\n</head>\n<body>\n<div id=\"js-status\" data-errors=\"0\" data-ready=\"0\" hidden></div>\n<script>" +
         error_trap_script() + "</script>\n<header><h1>exasim report: " + escape(title) + "</h1><p>" +
         escape(subtitle) + "</p></header>\n<main>\n" + page.body +
         (notes.empty() ? ""
                        : "<section id=\"notes\"><h2>What this page leaves out</h2><ul class=\"note\">" + notes +
                              "</ul></section>\n") +
         "<p class=\"note\">Written by exasim report; self-contained (no network). Charts: " +
         std::to_string(page.charts.size()) + ".</p>\n</main>\n<script>" + page_script() +
         "</script>\n</body>\n</html>\n";
}

/// A CSV file's rows whose header must be `header` (InputError naming the file and line otherwise).
report::CsvTable read_csv_rows(const fs::path& path, const std::vector<std::string>& header) {
  auto table = report::read_csv_table(path.string());
  if (table.header != header)
    throw InputError(path.string(), "line 1", "expected the header " + report::csv_line(header));
  table.require_width();
  return table;
}

// --- simulate -------------------------------------------------------------------------------------

/// Whether `name` in the folder belongs to the run of summary.json: simulate lists what it wrote in
/// files_written, so a trace.csv or links.csv left by an earlier run into the same folder is not read.
bool of_this_run(Page& page, const fs::path& dir, const JsonView& s, const std::string& name) {
  if (!fs::exists(dir / name)) return false;
  if (!s.has("files_written")) return true;
  for (const auto& f : s.json().at("files_written"))
    if (f.is_string() && f.get<std::string>() == name) return true;
  page.notes.push_back(name + ": not read, an earlier run's (summary.json's files_written does not list it)");
  return false;
}

/// The keys of the object at `path` in the order the file has them (JsonView's json sorts them; the
/// summary lists dimensions in the scheme's order and kernel classes in the model's).
std::vector<std::string> keys_in_file_order(const nlohmann::ordered_json& doc,
                                            std::initializer_list<const char*> path) {
  const nlohmann::ordered_json* at = &doc;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return {};
    at = &at->at(key);
  }
  std::vector<std::string> keys;
  if (at->is_object())
    for (const auto& [k, v] : at->items()) keys.push_back(k);
  return keys;
}

void summary_section(Page& page, const JsonView& s) {
  const double t = s.number("iteration_time_s", 0, kBig);
  const double capacity = s.number("memory_capacity_bytes", 0, kBig);
  const double memory = s.number("memory_per_gpu_bytes", 0, kBig, false);
  page.body += "<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">";
  page.body += card("iteration-time", fmt("%.4f s", t), "iteration time");
  const double tflops = s.number("tflops_per_gpu", 0, kBig, false);
  // One decimal as exasim simulate prints it; three significant figures below 10 (a small GPU's 0.43
  // would read 0.4).
  page.body += card("tflops-per-gpu", fmt(tflops < 10 ? "%.3g" : "%.1f", tflops), "TFLOP/s per GPU (hardware flops)");
  page.body += card("percent-of-peak", fmt("%.1f%%", s.number("percent_of_peak", 0, kBig, false)),
                    "of the " + fmt("%.1f", s.number("peak_tflops_per_gpu", 0, kBig)) + " TFLOP/s peak");
  page.body += card("mfu", fmt("%.1f%%", s.number("mfu_percent", 0, kBig, false)), "MFU (model flops)");
  page.body += card("total-pflops", fmt("%.3g", s.number("total_pflops", 0, kBig, false)), "PFLOP/s in total");
  page.body += card("memory-per-gpu", bytes(memory) + " of " + bytes(capacity), "memory per GPU");
  page.body += "</div>";
  // Layer sampling: the times are an extrapolation, and the page must say so where they are shown.
  if (const auto& sampled = s.json().find("sampled_layers");
      sampled != s.json().end() && sampled->is_array() && sampled->size() == 2)
    page.body += "<p class=\"note\" id=\"sampled-note\">Approximate: " + escape(sampled->at(0).dump()) + " and " +
                 escape(sampled->at(1).dump()) +
                 " layers simulated, times extrapolated linearly to the model's (simulation.sample_layers; "
                 "docs/performance.md).</p>";
  page.body += "<h2>Memory per GPU</h2>";
  std::vector<Segment> segments;
  const auto m = s.object("memory_breakdown_bytes");
  const char* parts[] = {"weights", "gradients", "optimizer", "activations", "workspace"};
  const char* colours[] = {"#3d5a80", "#6a8caf", "#98c1d9", "#ee6c4d", "#f4a261"};
  for (int i = 0; i < 5; ++i) {
    const double v = m.number(parts[i], 0, kBig, false);
    segments.push_back({parts[i], colours[i], v, bytes(v)});
  }
  segments.push_back({"free", "#e3e8ed", std::max(0.0, capacity - memory), bytes(std::max(0.0, capacity - memory))});
  page.chart("memory-bar",
             stacked_bar("memory-bar", segments, std::max(capacity, memory),
                         bytes(memory) + " of " + bytes(capacity) + " (" + percent(memory, capacity) + ")"));
  page.body += "</section>\n";
}

void breakdown_section(Page& page, const JsonView& s, const nlohmann::ordered_json& ordered) {
  const double t = s.number("iteration_time_s", 0, kBig);
  const auto b = s.object("breakdown_s");
  std::vector<Segment> segments;
  const double compute = b.number("compute", 0, kBig, false);
  segments.push_back(
      {"compute", compute_colour("gemm"), compute, duration(compute) + " (" + percent(compute, t) + ")"});
  const auto exposed = b.object("exposed_comm");
  for (const auto& dim : keys_in_file_order(ordered, {"breakdown_s", "exposed_comm"})) {
    const double v = exposed.number(dim, 0, kBig, false);
    segments.push_back({"exposed " + dim, dim_colour(dim), v, duration(v) + " (" + percent(v, t) + ")"});
  }
  const double idle = b.number("idle", 0, kBig, false);
  segments.push_back({"idle", "#d5dbe0", idle, duration(idle) + " (" + percent(idle, t) + ")"});
  page.body += "<section id=\"breakdown\"><h2>Where the time goes (mean over ranks)</h2>";
  page.chart("breakdown-bar", stacked_bar("breakdown-bar", segments, t, "iteration " + duration(t)));
  page.body += "<table id=\"breakdown-table\"><tr><th>part</th><th>seconds</th><th>share</th>";
  const bool has_bytes = s.has("comm_bytes_per_rank");
  if (has_bytes) page.body += "<th>rank 0 bytes on the wire</th><th>rank 0 collectives</th>";
  page.body += "</tr>";
  for (const auto& seg : segments) {
    page.body += "<tr><td>" + escape(seg.label) + "</td><td>" + fmt("%.4f", seg.value) + "</td><td>" +
                 percent(seg.value, t) + "</td>";
    if (has_bytes) {
      const std::string dim = seg.label.rfind("exposed ", 0) == 0 ? seg.label.substr(8) : "";
      const auto wire = s.object("comm_bytes_per_rank");
      const auto count = s.object("collectives_per_rank");
      page.body += dim.empty() || !wire.has(dim) ? "<td></td><td></td>"
                                                 : "<td>" + bytes(wire.number(dim, 0, kBig, false)) + "</td><td>" +
                                                       fmt("%.0f", count.number(dim, 0, kBig, false)) + "</td>";
    }
    page.body += "</tr>";
  }
  page.body += "</table>";
  if (s.has("compute_by_kernel_s")) {
    const auto k = s.object("compute_by_kernel_s");
    std::vector<Segment> rows;
    for (const auto& name : keys_in_file_order(ordered, {"compute_by_kernel_s"})) {
      const double v = k.number(name, 0, kBig, false);
      rows.push_back({name,
                      compute_colour(name == "gemm" || name == "batched_gemm"      ? "gemm"
                                     : name.find("attention") != std::string::npos ? "attention"
                                                                                   : "memory"),
                      v, duration(v) + " (" + percent(v, t) + ")"});
    }
    page.body += "<h2>Compute by kernel class (mean over stages, recomputation included)</h2>";
    page.chart("kernel-chart", bar_chart("kernel-chart", rows));
  }
  page.body += "</section>\n";
}

void timeline_section(Page& page, const fs::path& dir, const JsonView& s, const ReportOptions& options,
                      ReportPage& out) {
  page.body += "<section id=\"timeline-section\"><h2>Timeline of the traced ranks</h2>";
  const fs::path csv = dir / "trace.csv";
  const double iteration_s = s.number("iteration_time_s", 0, kBig);
  if (!of_this_run(page, dir, s, "trace.csv")) {
    page.body += "<p class=\"note\">No trace.csv in this folder (simulate --out writes one).</p></section>\n";
    page.notes.push_back("timeline: no trace.csv in the folder");
    return;
  }
  const auto t = build_timeline(trace::read_csv(csv.string()), iteration_s, options.max_timeline_blocks,
                                options.max_timeline_ranks);
  out.trace_rows = t.rows;
  out.timeline_blocks = t.blocks;
  page.body +=
      "<p class=\"note\">Each rank: its work lane (compute kernels; waits, coloured by the dimension waited on) "
      "and under it the communication in flight (collectives and pipeline transfers from post to completion, "
      "by dimension). Blank is idle: the pipeline bubble, or waiting for the iteration to end. Wheel or buttons "
      "to zoom, drag to pan, double-click to reset; hover for the op.</p>";
  page.body += "<div class=\"legend\">";
  for (const auto& k : t.kinds)
    page.body += "<span><i style=\"background:" + compute_colour(k) + "\"></i>" + escape(k) +
                 (k == "gemm" && t.reduction_step >= 2 ? " (and merged compute kinds: hover says which)" : "") +
                 "</span>";
  for (const auto& d : t.dims)
    page.body += "<span><i style=\"background:" + dim_colour(d) + "\"></i>" + escape(d) + " (wait / in flight)</span>";
  page.body +=
      "</div><div class=\"controls\"><button id=\"zoom-in\">zoom in</button><button id=\"zoom-out\">zoom "
      "out</button><button id=\"zoom-reset\">reset</button></div><div id=\"timeline-info\"></div>";
  page.chart("timeline", timeline_svg(t));
  std::string drawn = std::to_string(t.blocks) + " blocks drawn for " + std::to_string(t.rows) + " trace rows of " +
                      std::to_string(t.ranks.size()) + " rank" + (t.ranks.size() == 1 ? "" : "s");
  if (t.ranks.size() < t.ranks_in_trace)
    page.notes.push_back("timeline: the first " + std::to_string(t.ranks.size()) + " of the " +
                         std::to_string(t.ranks_in_trace) + " traced ranks are drawn");
  const char* steps[] = {"", "neighbouring ops of the same kind less than 1/64000 of the iteration apart are merged",
                         "neighbouring ops of the same kind are merged, then the compute kinds together",
                         "ops are merged, then neighbours coarsened into spans coloured by their main kind"};
  if (t.reduction_step > 0)
    page.notes.push_back("timeline: at most " + std::to_string(options.max_timeline_blocks) + " blocks: " + drawn +
                         "; " + steps[t.reduction_step]);
  page.body += "<p class=\"note\" id=\"timeline-count\">" + escape(drawn) +
               (t.reduction_step > 0 ? std::string(" (") + steps[t.reduction_step] + ")" : std::string()) +
               ".</p></section>\n";
}

void links_section(Page& page, const fs::path& dir, const JsonView& s) {
  const fs::path csv = dir / "links.csv";
  const bool has_csv = of_this_run(page, dir, s, "links.csv");
  if (!s.has("links") && !has_csv) return;
  page.body += "<section id=\"links\"><h2>Links: what the network carried</h2>";
  if (s.has("links")) {
    const auto links = s.object("links");
    page.body +=
        "<table id=\"link-classes\"><tr><th>class</th><th>links</th><th>used</th><th>bytes</th><th>mean "
        "busy</th><th>mean utilisation</th><th>max utilisation</th></tr>";
    const auto& classes = links.json().at("classes");
    for (std::size_t i = 0; i < classes.size(); ++i) {
      const JsonView c(classes[i], s.source(), "links.classes[" + std::to_string(i) + "]");
      page.body +=
          "<tr><td>" + escape(c.string("class")) + "</td><td>" + fmt("%.0f", c.number("links", 0, kBig, false)) +
          "</td><td>" + fmt("%.0f", c.number("used", 0, kBig, false)) + "</td><td>" +
          bytes(c.number("bytes", 0, kBig, false)) + "</td><td>" + duration(c.number("mean_busy_s", 0, kBig, false)) +
          "</td><td>" + fmt("%.1f%%", 100 * c.number("mean_utilisation", 0, kBig, false)) + "</td><td>" +
          fmt("%.1f%%", 100 * c.number("max_utilisation", 0, kBig, false)) + "</td></tr>";
    }
    page.body += "</table>";
  }
  // The hottest links: every link from links.csv when there is one, else the summary's list.
  struct Hot {
    std::string name, cls;
    double bytes = 0, utilisation = 0;
  };
  std::vector<Hot> hot;
  if (has_csv) {
    const auto t = read_csv_rows(csv, {"link", "class", "from", "to", "bytes", "busy_s", "utilisation"});
    for (std::size_t i = 0; i < t.rows.size(); ++i)
      hot.push_back({t.cell(i, "from") + " -> " + t.cell(i, "to") + " (link " + t.cell(i, "link") + ")",
                     t.cell(i, "class"), t.number(i, "bytes"), t.number(i, "utilisation")});
  } else if (s.has("links") && s.object("links").has("hottest")) {
    const auto& list = s.json().at("links").at("hottest");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const JsonView h(list[i], s.source(), "links.hottest[" + std::to_string(i) + "]");
      hot.push_back(
          {h.string("from") + " -> " + h.string("to") + " (link " + fmt("%.0f", h.number("link", 0, kBig, false)) + ")",
           h.string("class"), h.number("bytes", 0, kBig, false), h.number("utilisation", 0, kBig, false)});
    }
  }
  std::stable_sort(hot.begin(), hot.end(), [](const Hot& a, const Hot& b) { return a.utilisation > b.utilisation; });
  if (hot.size() > kHottestLinks) hot.resize(kHottestLinks);
  if (!hot.empty()) {
    std::vector<Segment> rows;
    const char* palette[] = {"#3d5a80", "#e4572e", "#2e86ab", "#a0c040", "#b5179e", "#f3a712"};
    std::vector<std::string> classes;
    for (const auto& h : hot) {
      auto it = std::find(classes.begin(), classes.end(), h.cls);
      if (it == classes.end()) it = classes.insert(classes.end(), h.cls);
      rows.push_back({h.name + " [" + h.cls + "]", palette[(it - classes.begin()) % 6], 100 * h.utilisation,
                      fmt("%.1f%%", 100 * h.utilisation) + ", " + bytes(h.bytes)});
    }
    page.body += "<h2>The hottest links (utilisation: bytes over what the link could carry in the iteration)</h2>";
    page.chart("hottest-links", bar_chart("hottest-links", rows));
  }
  if (s.has("links") && s.object("links").has("group_bytes")) {
    const auto& g = s.json().at("links").at("group_bytes");
    // A cell per group pair: 256 groups draw 65,536 cells (about 6 MB of page); a larger matrix is not
    // one exasim writes (a dragonfly has at most a few hundred groups) and would make a page of 100s of MB.
    constexpr std::size_t kMaxGroups = 256;
    if (!g.is_array() || g.size() > kMaxGroups)
      throw InputError(s.source(), "links.group_bytes",
                       "must be a group x group array of at most " + std::to_string(kMaxGroups) + " rows");
    for (std::size_t i = 0; i < g.size(); ++i)
      if (!g[i].is_array() || g[i].size() > g.size())
        throw InputError(s.source(), "links.group_bytes[" + std::to_string(i) + "]",
                         "must be an array of at most " + std::to_string(g.size()) + " numbers");
    double max = 0;
    for (const auto& row : g)
      for (const auto& v : row)
        if (v.is_number()) max = std::max(max, v.get<double>());
    const std::size_t n = g.size();
    const double cell = n > 40 ? 8 : 16, off = 40;
    std::string svg = "<svg id=\"group-matrix\" class=\"chart\" style=\"max-width:" +
                      fmt("%.0f", off + cell * static_cast<double>(n) + 10) + "px\" viewBox=\"0 0 " +
                      fmt("%.0f", off + cell * static_cast<double>(n) + 10) + " " +
                      fmt("%.0f", off + cell * static_cast<double>(n) + 10) + "\" role=\"img\">";
    svg += "<rect x=\"" + fmt("%.0f", off) + "\" y=\"" + fmt("%.0f", off) + "\" width=\"" +
           fmt("%.0f", cell * static_cast<double>(n)) + "\" height=\"" + fmt("%.0f", cell * static_cast<double>(n)) +
           "\" fill=\"#eef2f6\"><title>no traffic</title></rect>";
    for (std::size_t i = 0; i < n; ++i) {
      const double p = off + cell * static_cast<double>(i) + cell / 2;
      if (n <= 40 || i % 8 == 0) {
        svg += "<text x=\"" + fmt("%.1f", p) + "\" y=\"" + fmt("%.0f", off - 6) + "\" text-anchor=\"middle\">" +
               std::to_string(i) + "</text>";
        svg += "<text x=\"" + fmt("%.0f", off - 6) + "\" y=\"" + fmt("%.1f", p + 4) + "\" text-anchor=\"end\">" +
               std::to_string(i) + "</text>";
      }
      for (std::size_t j = 0; j < n && j < g[i].size(); ++j) {
        const double v = g[i][j].is_number() ? g[i][j].get<double>() : 0;
        if (v <= 0) continue;  // the background shows through: a 74-group matrix is mostly empty
        // Square-root shading, so that the light traffic of non-minimal routes still shows.
        const double a = max > 0 ? std::sqrt(v / max) : 0;
        svg += "<rect x=\"" + fmt("%.0f", off + cell * static_cast<double>(j)) + "\" y=\"" +
               fmt("%.0f", off + cell * static_cast<double>(i)) + "\" width=\"" + fmt("%.0f", cell - 1) +
               "\" height=\"" + fmt("%.0f", cell - 1) + "\" fill=\"#b5179e\" fill-opacity=\"" +
               fmt("%.3f", 0.1 + 0.9 * a) + "\"><title>group " + std::to_string(i) + " -> group " + std::to_string(j) +
               ": " + bytes(v) + "</title></rect>";
      }
    }
    svg += "</svg>";
    page.body += "<h2>Global traffic, group x group (row: from, column: to; darkest " + bytes(max) +
                 ", shade by the square root of bytes)</h2>";
    page.chart("group-matrix", svg);
  } else {
    page.body += "<p class=\"note\">No group x group matrix: this network has one group.</p>";
  }
  page.body += "</section>\n";
}

std::string simulate_page(const fs::path& dir, const ReportOptions& options, ReportPage& out) {
  const fs::path path = dir / "summary.json";
  const auto doc = read_json_file(path.string());
  const JsonView s(doc, path.string(), "");
  // Parsed once more in file order (read_json_file has checked it is valid JSON).
  const auto ordered = nlohmann::ordered_json::parse(read_input_text(path.string(), "a summary.json"), nullptr, false);
  out.title = s.string("scenario");
  std::string layout;
  for (const auto& k : keys_in_file_order(ordered, {"parallel"})) {
    const auto& v = s.object("parallel").json().at(k);
    if (!layout.empty()) layout += ' ';
    if (v.is_string()) {
      layout += v.get<std::string>();
    } else {
      layout += k;
      layout += '=';
      layout += v.dump();
    }
  }
  const std::string subtitle = s.string("model") + " on " + fmt("%.0f", s.number("gpus", 0, kBig)) + " x " +
                               s.string("gpu") + " (" + s.string("machine") + "), " + layout + ", global batch " +
                               fmt("%.0f", s.number("global_batch", 0, kBig)) + "; network " + s.string("network") +
                               ", routing " + s.string("routing") + ", placement " + s.string("placement") + ", " +
                               s.string("backend") + " backend";
  Page page;
  summary_section(page, s);
  breakdown_section(page, s, ordered);
  timeline_section(page, dir, s, options, out);
  links_section(page, dir, s);
  out.charts = page.charts;
  out.notes = page.notes;
  return document(out.title, subtitle, page);
}

// --- sweep ----------------------------------------------------------------------------------------

/// A sweep row's `parallel` object as exasim sweep prints it: the layout's figures in the scheme's
/// order (gx gy gz gdata; tp cp pp dp zero micro_batch virtual_stages ...), not sweep.json's sorted keys;
/// fields that no scheme here names follow in key order.
std::string layout_label(const nlohmann::json& parallel) {
  if (!parallel.is_object()) return parallel.is_string() ? parallel.get<std::string>() : parallel.dump();
  static const char* const order[] = {
      "gx", "gy", "gz", "gdata", "tp", "cp", "pp", "dp", "zero", "micro_batch", "virtual_stages", "sequence_parallel"};
  std::vector<std::string> keys;
  for (const char* k : order)
    if (parallel.contains(k)) keys.emplace_back(k);
  for (const auto& [k, v] : parallel.items())
    if (k != "scheme" && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  std::string out;
  for (const auto& k : keys) {
    const auto& v = parallel.at(k);
    out += (out.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

std::string sweep_page(const fs::path& dir, ReportPage& out) {
  const fs::path path = dir / "sweep.json";
  const auto doc = read_json_file(path.string());
  const JsonView s(doc, path.string(), "");
  out.title = s.string("scenario");
  if (!s.has("vary") || !s.json().at("vary").is_array() || s.json().at("vary").empty())
    s.fail("vary", "must be a list of the varied fields (exasim sweep --out writes it)");
  if (!s.has("rows") || !s.json().at("rows").is_array() || s.json().at("rows").empty())
    s.fail("rows", "must be a non-empty list of points (exasim sweep --out writes it)");
  std::vector<std::string> vary;
  for (const auto& v : s.json().at("vary")) vary.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  // The x axis: gpus when it varies (scaling), else the first varied field.
  const std::string x_key = std::find(vary.begin(), vary.end(), "gpus") != vary.end() ? "gpus" : vary.front();
  const auto& rows = s.json().at("rows");
  std::vector<double> x;
  std::vector<std::string> categories;
  bool numeric = true;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Series time{"iteration time", "#3d5a80", {}}, tflops{"TFLOP/s per GPU", "#e4572e", {}},
      model{"model TFLOP/s per GPU", "#98c1d9", {}}, eff{"scaling efficiency", "#2e86ab", {}},
      peak{"% of peak", "#b5179e", {}};
  bool has_eff = false;
  std::string table = "<table id=\"sweep-table\"><tr>";
  for (const auto& v : vary) table += "<th>" + escape(v) + "</th>";
  table +=
      "<th>parallel</th><th>iteration s</th><th>TFLOP/s/GPU</th><th>% peak</th><th>MFU %</th><th>memory per "
      "GPU</th><th>scaling %</th></tr>";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const JsonView r(rows[i], s.source(), "rows[" + std::to_string(i) + "]");
    const auto point = r.object("point");
    const auto& xv = point.json().contains(x_key) ? point.json().at(x_key) : nlohmann::json();
    if (xv.is_number() && xv.get<double>() > 0)
      x.push_back(xv.get<double>());
    else
      numeric = false;
    categories.push_back(xv.is_string() ? xv.get<std::string>() : xv.dump());
    table += "<tr>";
    for (const auto& v : vary) {
      const auto& pv = point.json().contains(v) ? point.json().at(v) : nlohmann::json();
      table += "<td>" + escape(pv.is_string() ? pv.get<std::string>() : pv.dump()) + "</td>";
    }
    table += "<td>" + escape(r.has("parallel") ? layout_label(r.json().at("parallel")) : "") + "</td>";
    if (r.has("error")) {
      for (auto* se : {&time, &tflops, &model, &eff, &peak}) se->y.push_back(nan);
      table += "<td colspan=\"6\" class=\"err\">not simulated: " + escape(r.string("error")) + "</td></tr>";
      continue;
    }
    time.y.push_back(r.number("iteration_time_s", 0, kBig));
    tflops.y.push_back(r.number("tflops_per_gpu", 0, kBig, false));
    model.y.push_back(r.number("model_tflops_per_gpu", 0, kBig, false));
    peak.y.push_back(r.number("percent_of_peak", 0, kBig, false));
    const bool e = r.has("scaling_efficiency_percent");
    has_eff |= e;
    eff.y.push_back(e ? r.number("scaling_efficiency_percent", 0, kBig, false) : nan);
    table += "<td>" + fmt("%.4f", time.y.back()) + "</td><td>" + fmt("%.1f", tflops.y.back()) + "</td><td>" +
             fmt("%.1f", peak.y.back()) + "</td><td>" + fmt("%.1f", r.number("mfu_percent", 0, kBig, false)) +
             "</td><td>" + bytes(r.number("memory_per_gpu_bytes", 0, kBig, false)) + "</td><td>" +
             (e ? fmt("%.1f", eff.y.back()) : "") + "</td></tr>";
  }
  table += "</table>";
  if (!numeric) x.assign(rows.size(), 0);
  const bool log_x = numeric && x_key == "gpus";
  const auto cats = numeric ? std::vector<std::string>{} : categories;
  Page page;
  page.body +=
      "<section id=\"sweep\"><h2>Sweep over " + escape(x_key) + " (" + std::to_string(rows.size()) + " points)</h2>";
  page.chart("sweep-time", line_chart("sweep-time", "Iteration time", "seconds", x, cats, x_key, {time}, log_x));
  page.chart("sweep-tflops",
             line_chart("sweep-tflops", "TFLOP/s per GPU", "TFLOP/s", x, cats, x_key, {tflops, model}, log_x));
  if (has_eff)
    page.chart("sweep-efficiency", line_chart("sweep-efficiency", "Scaling efficiency vs the first point", "percent", x,
                                              cats, x_key, {eff}, log_x));
  else
    page.chart("sweep-peak", line_chart("sweep-peak", "% of peak", "percent", x, cats, x_key, {peak}, log_x));
  page.body += table + "</section>\n";
  if (!has_eff)
    page.notes.push_back("sweep: no scaling efficiency (the GPU count does not vary, or its first point failed)");
  out.charts = page.charts;
  out.notes = page.notes;
  std::string varied;
  for (const auto& v : vary) varied += (varied.empty() ? "" : ", ") + v;
  return document(out.title, "exasim sweep over " + varied + (s.boolean_or("tuned", false) ? ", each point tuned" : ""),
                  page);
}

// --- tune -----------------------------------------------------------------------------------------

/// The name of the scenario a command wrote beside its table (tune's best.json, place's scenario.json),
/// or `fallback` when the file is absent or has no name.
std::string scenario_name(const fs::path& scenario, const std::string& fallback) {
  if (!fs::exists(scenario)) return fallback;
  const auto doc = read_json_file(scenario.string());
  if (doc.is_object() && doc.contains("name") && doc.at("name").is_string()) return doc.at("name");
  return fallback;
}

std::string tune_page(const fs::path& dir, ReportPage& out) {
  // exasim tune --out: tune.csv, written and read by sim/tune/tune_csv.hpp.
  const fs::path csv = dir / "tune.csv";
  const auto table = tune::read_tune_csv(csv.string());
  if (table.rows.empty())
    throw InputError(csv.string(), "", "has no grid: exasim tune --out writes one row per grid that fits");
  out.title = scenario_name(dir / "best.json", "tune");
  struct Grid {
    std::string label;
    double analytic = 0, memory = 0, simulated = -1, peak = 0, tflops = 0;
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
    }
    grids.push_back(g);
  }
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
    page.body += card("percent-of-peak", fmt("%.1f%%", simulated.front().peak), "of peak");
  }
  page.body += card("grids-fitting", std::to_string(grids.size()), what + "s that fit") + "</div>";
  std::vector<Segment> bars;
  for (std::size_t i = 0; i < simulated.size(); ++i)
    bars.push_back({std::to_string(i + 1) + ". " + simulated[i].label, i == 0 ? "#2e86ab" : "#98c1d9",
                    simulated[i].simulated, fmt("%.4f s", simulated[i].simulated)});
  if (!bars.empty())
    page.chart("tune-ranking", bar_chart("tune-ranking", bars));
  else
    page.notes.push_back("tune: no " + what + " was simulated");
  page.body +=
      "<h2>Every " + what + " that fits, in the analytic order</h2><table id=\"tune-table\"><tr><th>" + what +
      "</th><th>analytic s</th><th>memory per GPU</th><th>simulated s</th><th>% peak</th><th>TFLOP/s/GPU</th></tr>";
  for (const auto& g : grids)
    page.body += "<tr><td>" + escape(g.label) + "</td><td>" + fmt("%.4f", g.analytic) + "</td><td>" + bytes(g.memory) +
                 "</td><td>" + (g.simulated >= 0 ? fmt("%.4f", g.simulated) : "") + "</td><td>" +
                 (g.simulated >= 0 ? fmt("%.1f", g.peak) : "") + "</td><td>" +
                 (g.simulated >= 0 ? fmt("%.1f", g.tflops) : "") + "</td></tr>";
  page.body += "</table></section>\n";
  out.charts = page.charts;
  out.notes = page.notes;
  return document(out.title,
                  "exasim tune: " + std::to_string(grids.size()) + " " + what + "s fit, " +
                      std::to_string(simulated.size()) + " simulated" +
                      (table.alone ? "" : " (" + scenario::scheme_list(&scenario::Scheme::title) + " as searched)"),
                  page);
}

// --- place ----------------------------------------------------------------------------------------

std::string place_page(const fs::path& dir, ReportPage& out) {
  // exasim place --out: place.csv (every simulated placement), placement.txt (the plan) and
  // scenario.json (a scenario running it); sim/cli/place_command.cpp.
  const fs::path csv = dir / "place.csv";
  const auto t = read_csv_rows(csv, {"placement", "baseline", "analytic_iteration_s", "iteration_time_s"});
  if (t.rows.empty())
    throw InputError(csv.string(), "", "has no placement: exasim place --out writes one row per simulated placement");
  struct Placement {
    std::string label;
    bool baseline = false;
    double analytic = 0, simulated = 0;
  };
  std::vector<Placement> placements;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& baseline = t.cell(i, "baseline");
    if (baseline != "0" && baseline != "1")
      throw InputError(csv.string(), "row " + std::to_string(i + 1) + " baseline",
                       "must be 0 or 1, not '" + baseline + "'");
    placements.push_back({t.cell(i, "placement"), baseline == "1", t.number(i, "analytic_iteration_s"),
                          t.number(i, "iteration_time_s")});
  }
  std::stable_sort(placements.begin(), placements.end(),
                   [](const Placement& a, const Placement& b) { return a.simulated < b.simulated; });
  out.title = scenario_name(dir / "scenario.json", "place");
  // The baseline the change is against: packed on the whole machine, the scheduler's order with --nodes.
  const Placement* reference = nullptr;
  for (const char* name : {"packed", "scheduler"})
    for (const auto& p : placements)
      if (reference == nullptr && p.baseline && p.label == name) reference = &p;
  const auto change = [&](const Placement& p) {
    return reference == nullptr ? std::string() : fmt("%+.1f%%", 100 * (p.simulated / reference->simulated - 1));
  };
  const Placement& plan = placements.front();
  Page page;
  page.body += "<section id=\"place\"><h2>Place: the simulated placements, fastest first</h2><div class=\"cards\">";
  page.body += card("plan", plan.label, "the plan (placement.txt)");
  page.body += card("iteration-time", fmt("%.4f s", plan.simulated), "its iteration time");
  if (reference != nullptr) page.body += card("change", change(plan), "against " + reference->label);
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
  page.chart("place-ranking", bar_chart("place-ranking", bars));
  page.body +=
      "<table id=\"place-table\"><tr><th>placement</th><th>baseline</th><th>analytic s</th><th>simulated s</th>"
      "<th>" +
      (reference == nullptr ? std::string("change") : "vs " + escape(reference->label)) + "</th></tr>";
  for (const auto& p : placements)
    page.body += "<tr><td>" + escape(p.label) + "</td><td>" + (p.baseline ? "yes" : "") + "</td><td>" +
                 fmt("%.4f", p.analytic) + "</td><td>" + fmt("%.4f", p.simulated) + "</td><td>" + change(p) +
                 "</td></tr>";
  page.body +=
      "</table><p>The analytic seconds are the search's score (docs/place.md); the simulated ones rank. "
      "<code>exasim simulate</code> on this folder's scenario.json runs the plan.</p></section>\n";
  if (reference == nullptr) page.notes.push_back("place: no packed or scheduler baseline, so no change is shown");
  out.charts = page.charts;
  out.notes = page.notes;
  return document(out.title, "exasim place: " + std::to_string(placements.size()) + " placements simulated", page);
}

}  // namespace

const char* to_string(FolderKind kind) {
  switch (kind) {
    case FolderKind::simulate: return "simulate";
    case FolderKind::sweep: return "sweep";
    case FolderKind::tune: return "tune";
    case FolderKind::place: return "place";
  }
  return "?";
}

FolderKind detect_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(
        dir.string(), "",
        fs::exists(dir, ec) ? "is not a folder: give the folder a command wrote with --out" : "no such folder");
  if (fs::is_regular_file(dir / "summary.json", ec)) return FolderKind::simulate;
  if (fs::is_regular_file(dir / "sweep.json", ec)) return FolderKind::sweep;
  if (fs::is_regular_file(dir / "tune.csv", ec)) return FolderKind::tune;
  if (fs::is_regular_file(dir / "place.csv", ec)) return FolderKind::place;
  throw InputError(dir.string(), "",
                   "not an exasim output folder: expected summary.json (exasim simulate --out), sweep.json (exasim "
                   "sweep --out), tune.csv (exasim tune --out) or place.csv (exasim place --out)");
}

ReportPage render_report(const fs::path& dir, const ReportOptions& options) {
  ReportPage out;
  out.kind = detect_folder(dir);
  switch (out.kind) {
    case FolderKind::simulate: out.html = simulate_page(dir, options, out); break;
    case FolderKind::sweep: out.html = sweep_page(dir, out); break;
    case FolderKind::tune: out.html = tune_page(dir, out); break;
    case FolderKind::place: out.html = place_page(dir, out); break;
  }
  return out;
}

}  // namespace exasim::html
