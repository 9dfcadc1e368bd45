#include "sim/html/report_page.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/html/internal/assets.hpp"
#include "sim/html/internal/page.hpp"
#include "sim/html/internal/svg.hpp"
#include "sim/html/internal/timeline.hpp"
#include "sim/report/csv_table.hpp"
#include "traces/trace.hpp"

#include <algorithm>
#include <cmath>

namespace exasim::html {

namespace fs = std::filesystem;
using namespace internal;

namespace {

constexpr std::size_t kHottestLinks = 10;

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

}  // namespace

const char* to_string(FolderKind kind) {
  switch (kind) {
    case FolderKind::simulate: return "simulate";
    case FolderKind::sweep: return "sweep";
    case FolderKind::tune: return "tune";
    case FolderKind::place: return "place";
    case FolderKind::job: return "job";
  }
  return "?";
}

FolderKind detect_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(
        dir.string(), "",
        fs::exists(dir, ec) ? "is not a folder: give the folder a command wrote with --out" : "no such folder");
  if (fs::is_regular_file(dir / "job.json", ec)) return FolderKind::job;
  if (fs::is_regular_file(dir / "summary.json", ec)) return FolderKind::simulate;
  if (fs::is_regular_file(dir / "sweep.json", ec)) return FolderKind::sweep;
  if (fs::is_regular_file(dir / "tune.csv", ec)) return FolderKind::tune;
  if (fs::is_regular_file(dir / "place.csv", ec)) return FolderKind::place;
  throw InputError(
      dir.string(), "",
      "not an exasim output folder: expected summary.json (exasim simulate --out), sweep.json (exasim "
      "sweep --out), tune.csv (exasim tune --out), place.csv (exasim place --out) or job.json (exasim job --out)");
}

ReportPage render_report(const fs::path& dir, const ReportOptions& options) {
  ReportPage out;
  out.kind = detect_folder(dir);
  switch (out.kind) {
    case FolderKind::simulate: out.html = simulate_page(dir, options, out); break;
    case FolderKind::sweep: out.html = sweep_page(dir, out); break;
    case FolderKind::tune: out.html = tune_page(dir, out); break;
    case FolderKind::place: out.html = place_page(dir, out); break;
    case FolderKind::job: out.html = job_page(dir, out); break;
  }
  return out;
}

}  // namespace exasim::html
