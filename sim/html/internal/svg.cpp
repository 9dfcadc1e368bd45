#include "sim/html/internal/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace exasim::html::internal {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string duration(double seconds) {
  const double a = std::fabs(seconds);
  if (a >= 1 || a == 0) return fmt("%.4g s", seconds);
  if (a >= 1e-3) return fmt("%.4g ms", seconds * 1e3);
  return fmt("%.4g us", seconds * 1e6);
}

std::string bytes(double value) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (std::fabs(value) >= 1000 && u < 5) {
    value /= 1000;
    ++u;
  }
  // Three significant figures, trailing zeros kept, so that a column or a legend reads alike
  // (11.0 GB beside 1.31 GB, not 11 GB); whole bytes as they are.
  const double a = std::fabs(value);
  const char* format = u == 0 ? "%.0f" : a < 9.995 ? "%.2f" : a < 99.95 ? "%.1f" : "%.0f";
  return fmt(format, value) + " " + units[u];
}

std::string dim_colour(std::string_view dim) {
  // Tensor-like dimensions warm, data cool, pipeline magenta; AxoNN's x, y, z and Megatron's tp share hues
  // so that pages of the two schemes read alike.
  if (dim == "x" || dim == "tp") return "#e4572e";
  if (dim == "y") return "#f3a712";
  if (dim == "z" || dim == "cp") return "#a0c040";
  if (dim == "data" || dim == "dp" || dim == "dp_cp") return "#2e86ab";
  if (dim == "pp") return "#b5179e";
  return "#8a8a8a";
}

std::string compute_colour(std::string_view kind) {
  if (kind == "gemm") return "#3d5a80";
  if (kind == "attention") return "#6a8caf";
  return "#98c1d9";  // memory-bound kernels
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || target < 1) return {lo};
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::string stacked_bar(const std::string& id, const std::vector<Segment>& segments, double total,
                        const std::string& total_label) {
  const double width = 900, bar_h = 34;
  const int rows = static_cast<int>((segments.size() + 3) / 4);
  const double height = bar_h + 16 + rows * 20 + 6;
  std::string s = "<svg id=\"" + id + "\" class=\"chart\" viewBox=\"0 0 " + fmt("%.0f", width) + " " +
                  fmt("%.0f", height) + "\" role=\"img\">";
  s += "<rect x=\"0\" y=\"0\" width=\"" + fmt("%.0f", width) + "\" height=\"" + fmt("%.0f", bar_h) +
       "\" class=\"bar-bg\"><title>" + escape(total_label) + "</title></rect>";
  double x = 0;
  for (const auto& seg : segments) {
    const double w = total > 0 ? width * seg.value / total : 0;
    if (w > 0)
      s += "<rect x=\"" + fmt("%.2f", x) + "\" y=\"0\" width=\"" + fmt("%.2f", w) + "\" height=\"" +
           fmt("%.0f", bar_h) + "\" fill=\"" + seg.colour + "\"><title>" + escape(seg.label + ": " + seg.shown) +
           "</title></rect>";
    x += w;
  }
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const double lx = static_cast<double>(i % 4) * 225, ly = bar_h + 16 + static_cast<double>(i / 4) * 20;
    s += "<rect x=\"" + fmt("%.0f", lx) + "\" y=\"" + fmt("%.0f", ly - 10) + "\" width=\"12\" height=\"12\" fill=\"" +
         segments[i].colour + "\"/><text x=\"" + fmt("%.0f", lx + 17) + "\" y=\"" + fmt("%.0f", ly) + "\">" +
         escape(segments[i].label + " " + segments[i].shown) + "</text>";
  }
  return s + "</svg>";
}

std::string bar_chart(const std::string& id, const std::vector<Segment>& rows, double max) {
  // Room for the longest label (about 7 units a character at the charts' 12 px), at least 380.
  std::size_t longest = 0;
  for (const auto& r : rows) longest = std::max(longest, r.label.size());
  const double label_w = std::max(380.0, 7.0 * static_cast<double>(longest) + 16), bar_w = 420, row_h = 22,
               width = label_w + bar_w + 240;
  for (const auto& r : rows) max = std::max(max, r.value);
  const double height = row_h * static_cast<double>(rows.size()) + 4;
  // Drawn at its own size (one unit a pixel), not stretched to the page.
  std::string s = "<svg id=\"" + id + "\" class=\"chart\" style=\"max-width:" + fmt("%.0f", width) +
                  "px\" viewBox=\"0 0 " + fmt("%.0f", width) + " " + fmt("%.0f", height) + "\" role=\"img\">";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double y = static_cast<double>(i) * row_h + 2;
    const double w = max > 0 ? bar_w * r.value / max : 0;
    s += "<text x=\"" + fmt("%.0f", label_w - 8) + "\" y=\"" + fmt("%.0f", y + 15) + "\" text-anchor=\"end\">" +
         escape(r.label) + "</text>";
    s += "<rect x=\"" + fmt("%.0f", label_w) + "\" y=\"" + fmt("%.0f", y + 2) + "\" width=\"" + fmt("%.2f", w) +
         "\" height=\"" + fmt("%.0f", row_h - 6) + "\" fill=\"" + r.colour + "\"><title>" +
         escape(r.label + ": " + r.shown) + "</title></rect>";
    s += "<text x=\"" + fmt("%.2f", label_w + w + 6) + "\" y=\"" + fmt("%.0f", y + 15) + "\">" + escape(r.shown) +
         "</text>";
  }
  return s + "</svg>";
}

std::string line_chart(const std::string& id, const std::string& title, const std::string& y_label,
                       const std::vector<double>& x, const std::vector<std::string>& categories,
                       const std::string& x_label, const std::vector<Series>& series, bool log_x) {
  const double width = 440, height = 300, left = 62, right = 14, top = series.size() > 1 ? 44 : 30, bottom = 48;
  const double pw = width - left - right, ph = height - top - bottom;
  const std::size_t n = x.size();
  // x positions: categories evenly, else linear or log2 over the range.
  std::vector<double> px(n);
  const bool evenly = !categories.empty() || n < 2;
  const auto tx = [&](double v) { return log_x ? std::log2(v) : v; };
  double x_lo = n ? tx(x.front()) : 0, x_hi = x_lo;
  for (double v : x) {
    x_lo = std::min(x_lo, tx(v));
    x_hi = std::max(x_hi, tx(v));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (evenly || x_hi <= x_lo)
      px[i] = left + (n > 1 ? pw * static_cast<double>(i) / static_cast<double>(n - 1) : pw / 2);
    else
      px[i] = left + pw * (tx(x[i]) - x_lo) / (x_hi - x_lo);
  }
  double y_hi = 0;
  for (const auto& se : series)
    for (double v : se.y)
      if (std::isfinite(v)) y_hi = std::max(y_hi, v);
  if (y_hi <= 0) y_hi = 1;
  const auto ticks = nice_ticks(0, y_hi * 1.1, 5);
  const double y_top = std::max(ticks.back(), y_hi * 1.1);
  const auto py = [&](double v) { return top + ph * (1 - v / y_top); };

  std::string s = "<svg id=\"" + id + "\" class=\"chart line\" viewBox=\"0 0 " + fmt("%.0f", width) + " " +
                  fmt("%.0f", height) + "\" role=\"img\">";
  s += "<text x=\"" + fmt("%.0f", left) + "\" y=\"18\" class=\"chart-title\">" + escape(title) + "</text>";
  for (double t : ticks) {
    s += "<line x1=\"" + fmt("%.0f", left) + "\" x2=\"" + fmt("%.0f", left + pw) + "\" y1=\"" + fmt("%.2f", py(t)) +
         "\" y2=\"" + fmt("%.2f", py(t)) + "\" class=\"grid\"/>";
    s += "<text x=\"" + fmt("%.0f", left - 6) + "\" y=\"" + fmt("%.2f", py(t) + 4) + "\" text-anchor=\"end\">" +
         fmt("%.4g", t) + "</text>";
  }
  s += "<text transform=\"translate(14," + fmt("%.0f", top + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       escape(y_label) + "</text>";
  for (std::size_t i = 0; i < n; ++i)
    s += "<text x=\"" + fmt("%.2f", px[i]) + "\" y=\"" + fmt("%.0f", top + ph + 16) + "\" text-anchor=\"middle\">" +
         escape(categories.empty() ? fmt("%.6g", x[i]) : categories[i]) + "</text>";
  s += "<text x=\"" + fmt("%.0f", left + pw / 2) + "\" y=\"" + fmt("%.0f", height - 8) + "\" text-anchor=\"middle\">" +
       escape(x_label) + "</text>";
  s += "<line x1=\"" + fmt("%.0f", left) + "\" x2=\"" + fmt("%.0f", left + pw) + "\" y1=\"" + fmt("%.0f", top + ph) +
       "\" y2=\"" + fmt("%.0f", top + ph) + "\" class=\"axis\"/>";
  for (const auto& se : series) {
    std::string path;
    for (std::size_t i = 0; i < n && i < se.y.size(); ++i) {
      if (!std::isfinite(se.y[i])) continue;
      path += (path.empty() ? "M" : " L") + fmt("%.2f", px[i]) + "," + fmt("%.2f", py(se.y[i]));
    }
    if (!path.empty()) s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + se.colour + "\" stroke-width=\"2\"/>";
    for (std::size_t i = 0; i < n && i < se.y.size(); ++i) {
      if (!std::isfinite(se.y[i])) continue;
      s += "<circle cx=\"" + fmt("%.2f", px[i]) + "\" cy=\"" + fmt("%.2f", py(se.y[i])) + "\" r=\"4\" fill=\"" +
           se.colour + "\"><title>" +
           escape(se.label + " at " + (categories.empty() ? fmt("%.6g", x[i]) : categories[i]) + ": " +
                  fmt("%.4g", se.y[i])) +
           "</title></circle>";
    }
  }
  if (series.size() > 1)
    for (std::size_t k = 0; k < series.size(); ++k) {
      const double lx = left + static_cast<double>(k) * 160;
      s += "<rect x=\"" + fmt("%.0f", lx) + "\" y=\"24\" width=\"10\" height=\"10\" fill=\"" + series[k].colour +
           "\"/><text x=\"" + fmt("%.0f", lx + 14) + "\" y=\"33\">" + escape(series[k].label) + "</text>";
    }
  return s + "</svg>";
}

}  // namespace exasim::html::internal
