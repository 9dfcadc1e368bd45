// The page of `exasim sweep --out` (sweep.json, sim/cli/sweep_command.cpp): one series per combination
// of the varied fields other than the x axis's, charted against the x field's distinct values.

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/html/internal/page.hpp"
#include "sim/html/internal/svg.hpp"
#include "sim/html/report_page.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace exasim::html::internal {

namespace {

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

std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// Index of `value` in `list`, appended when new.
std::size_t index_of(std::vector<std::string>& list, const std::string& value) {
  const auto it = std::find(list.begin(), list.end(), value);
  if (it != list.end()) return static_cast<std::size_t>(it - list.begin());
  list.push_back(value);
  return list.size() - 1;
}

constexpr const char* kSeriesColours[] = {"#3d5a80", "#e4572e", "#2e86ab", "#a0c040",
                                          "#b5179e", "#f3a712", "#6a8caf", "#8a8a8a"};

/// One figure of every row, as series over the x values (NaN where a combination has no such point).
std::vector<Series> figure_series(const std::vector<std::string>& names, std::size_t xs,
                                  const std::vector<std::size_t>& series_of, const std::vector<std::size_t>& x_of,
                                  const std::vector<double>& value, const std::string& suffix) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Series> out;
  for (std::size_t k = 0; k < names.size(); ++k)
    out.push_back({names[k].empty() ? suffix : names[k] + (suffix.empty() ? "" : " " + suffix), kSeriesColours[k % 8],
                   std::vector<double>(xs, nan)});
  for (std::size_t i = 0; i < value.size(); ++i)
    if (std::isfinite(value[i]) && !std::isfinite(out[series_of[i]].y[x_of[i]]))
      out[series_of[i]].y[x_of[i]] = value[i];
  return out;
}

}  // namespace

std::string sweep_page(const std::filesystem::path& dir, ReportPage& out) {
  const auto path = dir / "sweep.json";
  const auto doc = read_json_file(path.string());
  const JsonView s(doc, path.string(), "");
  out.title = s.string("scenario");
  if (!s.has("vary") || !s.json().at("vary").is_array() || s.json().at("vary").empty())
    s.fail("vary", "must be a list of the varied fields (exasim sweep --out writes it)");
  if (!s.has("rows") || !s.json().at("rows").is_array() || s.json().at("rows").empty())
    s.fail("rows", "must be a non-empty list of points (exasim sweep --out writes it)");
  std::vector<std::string> vary;
  for (const auto& v : s.json().at("vary")) vary.push_back(value_text(v));
  // The x axis: gpus when it varies (scaling), else the first varied field. The other fields name the
  // series, unless they vary together with it (--zip).
  const std::string x_key = std::find(vary.begin(), vary.end(), "gpus") != vary.end() ? "gpus" : vary.front();
  const bool zip = s.boolean_or("zip", false);
  std::vector<std::string> others;
  if (!zip)
    for (const auto& v : vary)
      if (v != x_key) others.push_back(v);
  const auto& rows = s.json().at("rows");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = rows.size();
  std::vector<std::string> x_names, series_names;
  std::vector<std::size_t> x_of(n), series_of(n);
  std::vector<double> x_number(n, nan), time(n, nan), tflops(n, nan), model(n, nan), peak(n, nan), mfu(n, nan);
  std::vector<double> days(n, nan), goodput(n, nan);  // points whose scenario has a job object (exasim job)
  bool has_job = false;
  bool numeric = true;
  for (std::size_t i = 0; i < n; ++i) {
    const JsonView r(rows[i], s.source(), "rows[" + std::to_string(i) + "]");
    const auto& point = r.object("point").json();
    const auto& xv = point.contains(x_key) ? point.at(x_key) : nlohmann::json();
    if (xv.is_number() && xv.get<double>() > 0)
      x_number[i] = xv.get<double>();
    else
      numeric = false;
    x_of[i] = index_of(x_names, value_text(xv));
    std::string name;
    for (const auto& o : others)
      name += (name.empty() ? "" : ", ") + o + "=" + value_text(point.contains(o) ? point.at(o) : nlohmann::json());
    series_of[i] = index_of(series_names, name);
    if (r.has("error")) continue;
    time[i] = r.number("iteration_time_s", 0, kBig);
    tflops[i] = r.number("tflops_per_gpu", 0, kBig, false);
    model[i] = r.number("model_tflops_per_gpu", 0, kBig, false);
    peak[i] = r.number("percent_of_peak", 0, kBig, false);
    mfu[i] = r.number("mfu_percent", 0, kBig, false);
    if (r.has("job")) {
      const auto job = r.object("job");
      days[i] = job.number("time_to_train_days", 0, kBig);
      goodput[i] = 100 * job.number("goodput", 0, 1);
      has_job = true;
    }
  }
  // Numeric x values in increasing order (the rows keep the sweep's order).
  std::vector<double> x;
  if (numeric) {
    std::vector<std::size_t> order(x_names.size());
    std::vector<double> value(x_names.size());
    for (std::size_t i = 0; i < n; ++i) value[x_of[i]] = x_number[i];
    for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return value[a] < value[b]; });
    std::vector<std::size_t> rank(order.size());
    std::vector<std::string> sorted;
    for (std::size_t j = 0; j < order.size(); ++j) {
      rank[order[j]] = j;
      sorted.push_back(x_names[order[j]]);
      x.push_back(value[order[j]]);
    }
    for (auto& xi : x_of) xi = rank[xi];
    x_names = sorted;
  }
  // Scaling efficiency, gpus on x: per series, model TFLOP/s per GPU over the same at the series' smallest
  // GPU count that ran.
  const bool scaling = numeric && x_key == "gpus";
  std::vector<double> efficiency(n, nan);
  bool has_eff = false;
  if (scaling) {
    const auto base_model = figure_series(series_names, x_names.size(), series_of, x_of, model, "");
    for (std::size_t i = 0; i < n; ++i) {
      const auto& y = base_model[series_of[i]].y;
      const auto first = std::find_if(y.begin(), y.end(), [](double v) { return std::isfinite(v); });
      if (std::isfinite(model[i]) && first != y.end() && *first > 0) {
        efficiency[i] = 100 * model[i] / *first;
        has_eff |= static_cast<std::ptrdiff_t>(x_of[i]) > first - y.begin();
      }
    }
  }
  const bool several = series_names.size() > 1;
  const auto chart = [&](const std::string& id, const std::string& title, const std::string& unit,
                         const std::vector<Series>& series) {
    return numeric ? line_chart(id, title, unit, x, {}, x_key, series, scaling)
                   : grouped_bar_chart(id, title, unit, x_names, x_key, series);
  };
  Page page;
  std::string by;
  for (const auto& k : others) by += (by.empty() ? "" : " x ") + k;
  page.body += "<section id=\"sweep\"><h2>Sweep over " + escape(x_key) +
               (several ? ", one series per " + escape(by) : std::string()) + " (" + std::to_string(n) +
               " points)</h2>";
  const auto of = [&](const std::vector<double>& v, const std::string& suffix) {
    return figure_series(series_names, x_names.size(), series_of, x_of, v, suffix);
  };
  // Two figures of the single series on one chart, each in its own colour.
  const auto two = [&](const std::vector<double>& a, const std::string& a_name, const char* a_colour,
                       const std::vector<double>& b, const std::string& b_name, const char* b_colour) {
    auto both = of(a, a_name);
    auto other = of(b, b_name);
    both[0].colour = a_colour;
    other[0].colour = b_colour;
    both.push_back(other[0]);
    return both;
  };
  page.chart("sweep-time", chart("sweep-time", "Iteration time", "seconds", of(time, several ? "" : "iteration time")));
  if (several) {
    page.chart("sweep-tflops", chart("sweep-tflops", "TFLOP/s per GPU (hardware flops)", "TFLOP/s", of(tflops, "")));
  } else {
    page.chart("sweep-tflops",
               chart("sweep-tflops", "TFLOP/s per GPU", "TFLOP/s",
                     two(tflops, "TFLOP/s per GPU", "#e4572e", model, "model TFLOP/s per GPU", "#98c1d9")));
  }
  if (has_eff) {
    page.chart("sweep-efficiency", chart("sweep-efficiency", "Scaling efficiency", "percent",
                                         of(efficiency, several ? "" : "scaling efficiency")));
  } else if (several) {
    page.chart("sweep-peak", chart("sweep-peak", "% of peak", "percent", of(peak, "")));
    page.chart("sweep-mfu", chart("sweep-mfu", "MFU (model flops over peak)", "percent", of(mfu, "")));
  } else {
    page.chart("sweep-peak", chart("sweep-peak", "% of peak and MFU", "percent",
                                   two(peak, "% of peak", "#b5179e", mfu, "MFU", "#2e86ab")));
  }
  if (has_job) {
    page.chart("sweep-days",
               chart("sweep-days", "Time to train (exasim job)", "days", of(days, several ? "" : "time to train")));
    page.chart("sweep-goodput", chart("sweep-goodput", "Goodput (failures, checkpoints)", "percent",
                                      of(goodput, several ? "" : "goodput")));
  }
  if (has_eff)
    page.body +=
        "<p class=\"note\" id=\"efficiency-note\">Scaling efficiency: the model TFLOP/s per GPU at each GPU count "
        "over the same at the smallest GPU count of its series that ran, in percent (100% there). Below "
        "100%, each GPU does less useful work as GPUs are added (communication, the pipeline bubble); above "
        "100%, the throughput per GPU rose, e.g. because the global batch grows with the GPUs (weak scaling) "
        "or a larger count allows a better layout.</p>";
  if (!numeric)
    page.body += "<p class=\"note\">" + escape(x_key) +
                 " takes names, not numbers: each value is a group of bars, one bar per series.</p>";
  std::string table = "<table id=\"sweep-table\"><tr>";
  for (const auto& v : vary) table += "<th>" + escape(v) + "</th>";
  table +=
      "<th>parallel</th><th>iteration s</th><th>TFLOP/s/GPU</th><th>% peak</th><th>MFU %</th><th>memory per "
      "GPU</th><th>scaling %</th></tr>";
  for (std::size_t i = 0; i < n; ++i) {
    const JsonView r(rows[i], s.source(), "rows[" + std::to_string(i) + "]");
    const auto& point = r.object("point").json();
    table += "<tr>";
    for (const auto& v : vary)
      table += "<td>" + escape(value_text(point.contains(v) ? point.at(v) : nlohmann::json())) + "</td>";
    table += "<td>" + escape(r.has("parallel") ? layout_label(r.json().at("parallel")) : "") + "</td>";
    if (r.has("error")) {
      table += "<td colspan=\"6\" class=\"err\">not simulated: " + escape(r.string("error")) + "</td></tr>";
      continue;
    }
    table += "<td>" + fmt("%.4f", time[i]) + "</td><td>" + fmt("%.1f", tflops[i]) + "</td><td>" + fmt("%.1f", peak[i]) +
             "</td><td>" + fmt("%.1f", mfu[i]) + "</td><td>" + bytes(r.number("memory_per_gpu_bytes", 0, kBig, false)) +
             "</td><td>" + (has_eff && std::isfinite(efficiency[i]) ? fmt("%.1f", efficiency[i]) : "") + "</td></tr>";
  }
  page.body += table + "</table></section>\n";
  if (!has_eff)
    page.notes.push_back(
        "sweep: no scaling efficiency (the GPU count does not vary, or no series ran at two GPU counts)");
  out.charts = page.charts;
  out.notes = page.notes;
  std::string varied;
  for (const auto& v : vary) varied += (varied.empty() ? "" : ", ") + v;
  return document(out.title,
                  "exasim sweep over " + varied + (zip ? " (varied together)" : "") +
                      (s.boolean_or("tuned", false) ? ", each point tuned" : ""),
                  page);
}

}  // namespace exasim::html::internal
