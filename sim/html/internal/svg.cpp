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

std::string bar_chart(const std::string& id, const std::vector<Segment>& rows, double max,
                      const std::string& axis_label) {
  // Room for the longest label (about 7 units a character at the charts' 12 px), at least 380.
  std::size_t longest = 0;
  for (const auto& r : rows) longest = std::max(longest, r.label.size());
  const double label_w = std::max(380.0, 7.0 * static_cast<double>(longest) + 16), bar_w = 420, row_h = 22,
               width = label_w + bar_w + 240;
  for (const auto& r : rows) max = std::max(max, r.value);
  // With an axis the scale ends on its last tick, so that every tick lies under the bars.
  std::vector<double> ticks = axis_label.empty() || !(max > 0) ? std::vector<double>{} : nice_ticks(0, max, 5);
  if (ticks.size() >= 2 && ticks.back() < max) ticks.push_back(ticks.back() + (ticks[1] - ticks[0]));
  if (!ticks.empty()) max = std::max(max, ticks.back());
  const double bars_h = row_h * static_cast<double>(rows.size()) + 4;
  const double height = bars_h + (ticks.empty() ? 0 : 38);
  // Drawn at its own size (one unit a pixel), not stretched to the page.
  std::string s = "<svg id=\"" + id + "\" class=\"chart\" style=\"max-width:" + fmt("%.0f", width) +
                  "px\" viewBox=\"0 0 " + fmt("%.0f", width) + " " + fmt("%.0f", height) + "\" role=\"img\">";
  for (double t : ticks) {
    const double x = label_w + (max > 0 ? bar_w * t / max : 0);
    s += "<line x1=\"" + fmt("%.2f", x) + "\" x2=\"" + fmt("%.2f", x) + "\" y1=\"0\" y2=\"" + fmt("%.0f", bars_h) +
         "\" class=\"grid\"/><text x=\"" + fmt("%.2f", x) + "\" y=\"" + fmt("%.0f", bars_h + 14) +
         "\" text-anchor=\"middle\">" + fmt("%.4g", t) + "</text>";
  }
  if (!ticks.empty())
    s += "<line x1=\"" + fmt("%.0f", label_w) + "\" x2=\"" + fmt("%.0f", label_w + bar_w) + "\" y1=\"" +
         fmt("%.0f", bars_h) + "\" y2=\"" + fmt("%.0f", bars_h) + "\" class=\"axis\"/><text x=\"" +
         fmt("%.0f", label_w + bar_w / 2) + "\" y=\"" + fmt("%.0f", bars_h + 32) + "\" text-anchor=\"middle\">" +
         escape(axis_label) + "</text>";
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

namespace {

constexpr double kCharWidth = 7;  // about a character's width at the charts' 12 px, rounded up

double text_width(const std::string& text) { return kCharWidth * static_cast<double>(text.size()); }

/// The legend of several series under a chart's title, from y = 24: two to a row when the names are
/// short, else one; returns the SVG and sets `bottom` to the y under it.
std::string series_legend(const std::vector<Series>& series, double left, double& bottom) {
  bottom = 30;
  if (series.size() < 2) return "";
  std::size_t longest = 0;
  for (const auto& se : series) longest = std::max(longest, se.label.size());
  const std::size_t per_row = longest <= 24 ? 2 : 1;
  std::string s;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const double lx = left + static_cast<double>(k % per_row) * 190, ly = 24 + static_cast<double>(k / per_row) * 16;
    s += "<rect x=\"" + fmt("%.0f", lx) + "\" y=\"" + fmt("%.0f", ly) + "\" width=\"10\" height=\"10\" fill=\"" +
         series[k].colour + "\"/><text x=\"" + fmt("%.0f", lx + 14) + "\" y=\"" + fmt("%.0f", ly + 9) + "\">" +
         escape(series[k].label) + "</text>";
  }
  bottom = 24 + static_cast<double>((series.size() + per_row - 1) / per_row) * 16 + 4;
  return s;
}

/// The x labels under a plot, centred on `px`, turned by 35 degrees when they would overlap (`rotate`);
/// the caller has made room for them (x_label_room).
std::string x_labels(const std::vector<double>& px, const std::vector<std::string>& labels, double y, bool rotate) {
  std::string s;
  for (std::size_t i = 0; i < px.size() && i < labels.size(); ++i)
    s += rotate ? "<text transform=\"translate(" + fmt("%.2f", px[i]) + "," + fmt("%.0f", y) +
                      ") rotate(-35)\" text-anchor=\"end\">" + escape(labels[i]) + "</text>"
                : "<text x=\"" + fmt("%.2f", px[i]) + "\" y=\"" + fmt("%.0f", y) + "\" text-anchor=\"middle\">" +
                      escape(labels[i]) + "</text>";
  return s;
}

/// Whether labels `spacing` apart overlap, and the height they need under the plot.
double x_label_room(const std::vector<std::string>& labels, double spacing, bool& rotate) {
  double widest = 0;
  for (const auto& l : labels) widest = std::max(widest, text_width(l));
  rotate = labels.size() > 1 && widest + 8 > spacing;
  return rotate ? 0.6 * widest + 20 : 22;
}

}  // namespace

namespace {

/// A plot's vertical scale from 0 to a round number above the largest finite value of `series`.
struct YScale {
  std::vector<double> ticks;
  double top = 0, height = 0, y_top = 1;
  [[nodiscard]] double at(double v) const { return top + height * (1 - v / y_top); }
};

YScale y_scale(const std::vector<Series>& series, double top, double height) {
  double y_hi = 0;
  for (const auto& se : series)
    for (double v : se.y)
      if (std::isfinite(v)) y_hi = std::max(y_hi, v);
  if (y_hi <= 0) y_hi = 1;
  YScale y;
  y.ticks = nice_ticks(0, y_hi * 1.1, 5);
  y.y_top = std::max(y.ticks.back(), y_hi * 1.1);
  y.top = top;
  y.height = height;
  return y;
}

/// The title, the horizontal grid with its tick values, and the rotated y label.
std::string frame(const std::string& title, const std::string& y_label, const YScale& y, double left, double pw) {
  std::string s = "<text x=\"" + fmt("%.0f", left) + "\" y=\"18\" class=\"chart-title\">" + escape(title) + "</text>";
  for (double t : y.ticks) {
    s += "<line x1=\"" + fmt("%.0f", left) + "\" x2=\"" + fmt("%.0f", left + pw) + "\" y1=\"" + fmt("%.2f", y.at(t)) +
         "\" y2=\"" + fmt("%.2f", y.at(t)) + "\" class=\"grid\"/>";
    s += "<text x=\"" + fmt("%.0f", left - 6) + "\" y=\"" + fmt("%.2f", y.at(t) + 4) + "\" text-anchor=\"end\">" +
         fmt("%.4g", t) + "</text>";
  }
  s += "<text transform=\"translate(14," + fmt("%.0f", y.top + y.height / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + escape(y_label) + "</text>";
  return s;
}

/// The x axis line and its label under the tick labels.
std::string x_axis(const std::string& x_label, double left, double pw, double axis_y, double label_y) {
  return "<text x=\"" + fmt("%.0f", left + pw / 2) + "\" y=\"" + fmt("%.0f", label_y) + "\" text-anchor=\"middle\">" +
         escape(x_label) + "</text><line x1=\"" + fmt("%.0f", left) + "\" x2=\"" + fmt("%.0f", left + pw) + "\" y1=\"" +
         fmt("%.0f", axis_y) + "\" y2=\"" + fmt("%.0f", axis_y) + "\" class=\"axis\"/>";
}

constexpr double kPlotHeight = 222;

/// A chart's opening: the svg element sized for its x labels (rotated when `spacing` is too narrow for
/// them), the frame with the y scale of `series`, the labels at `xs` and the x axis; the scale comes back
/// in `y` for the marks.
std::string open_chart(const std::string& id, const std::string& title, const std::string& y_label,
                       const std::string& x_label, const std::vector<double>& xs,
                       const std::vector<std::string>& labels, double spacing, const std::vector<Series>& series,
                       double left, double pw, double width, double top, YScale& y) {
  bool rotate = false;
  const double room = x_label_room(labels, spacing, rotate);
  const double height = top + kPlotHeight + room + 26;
  y = y_scale(series, top, kPlotHeight);
  std::string s = "<svg id=\"" + id + "\" class=\"chart line\" viewBox=\"0 0 " + fmt("%.0f", width) + " " +
                  fmt("%.0f", height) + "\" role=\"img\">";
  s += frame(title, y_label, y, left, pw);
  s += x_labels(xs, labels, top + kPlotHeight + 16, rotate);
  return s + x_axis(x_label, left, pw, top + kPlotHeight, height - 8);
}

}  // namespace

std::string line_chart(const std::string& id, const std::string& title, const std::string& y_label,
                       const std::vector<double>& x, const std::vector<std::string>& categories,
                       const std::string& x_label, const std::vector<Series>& series, bool log_x) {
  const std::size_t n = x.size();
  std::vector<std::string> labels(n);
  for (std::size_t i = 0; i < n; ++i) labels[i] = categories.empty() ? fmt("%.6g", x[i]) : categories[i];
  const double width = 440, left = 62;
  // The last x label is centred on the plot's right edge: room for its half, so that it is not clipped.
  const double right = std::max(14.0, n ? text_width(labels.back()) / 2 + 4 : 0.0);
  const double pw = width - left - right;
  double top = 30;
  const std::string legend = series_legend(series, left, top);
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
  double spacing = pw;
  for (std::size_t i = 1; i < n; ++i) spacing = std::min(spacing, std::fabs(px[i] - px[i - 1]));
  YScale y;
  std::string s = open_chart(id, title, y_label, x_label, px, labels, spacing, series, left, pw, width, top, y);
  for (const auto& se : series) {
    std::string path;
    for (std::size_t i = 0; i < n && i < se.y.size(); ++i) {
      if (!std::isfinite(se.y[i])) continue;
      path += (path.empty() ? "M" : " L") + fmt("%.2f", px[i]) + "," + fmt("%.2f", y.at(se.y[i]));
    }
    if (!path.empty()) s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + se.colour + "\" stroke-width=\"2\"/>";
    for (std::size_t i = 0; i < n && i < se.y.size(); ++i) {
      if (!std::isfinite(se.y[i])) continue;
      s += "<circle cx=\"" + fmt("%.2f", px[i]) + "\" cy=\"" + fmt("%.2f", y.at(se.y[i])) + "\" r=\"4\" fill=\"" +
           se.colour + "\"><title>" + escape(se.label + " at " + labels[i] + ": " + fmt("%.4g", se.y[i])) +
           "</title></circle>";
    }
  }
  return s + legend + "</svg>";
}

std::string grouped_bar_chart(const std::string& id, const std::string& title, const std::string& y_label,
                              const std::vector<std::string>& categories, const std::string& x_label,
                              const std::vector<Series>& series) {
  const std::size_t n = categories.size(), k = std::max<std::size_t>(1, series.size());
  const double left = 62, right = 14;
  // A category's slot holds its bars side by side; many bars widen the chart rather than thin them.
  const double width =
      std::max(440.0, left + right + static_cast<double>(n) * std::max(48.0, 14.0 * static_cast<double>(k) + 16));
  const double pw = width - left - right, slot = n ? pw / static_cast<double>(n) : pw;
  const double bar = std::min(28.0, (slot - 10) / static_cast<double>(k));
  double top = 30;
  const std::string legend = series_legend(series, left, top);
  std::vector<double> centres(n);
  for (std::size_t i = 0; i < n; ++i) centres[i] = left + slot * (static_cast<double>(i) + 0.5);
  YScale y;
  std::string s = open_chart(id, title, y_label, x_label, centres, categories, slot, series, left, pw, width, top, y);
  for (std::size_t j = 0; j < series.size(); ++j)
    for (std::size_t i = 0; i < n && i < series[j].y.size(); ++i) {
      const double v = series[j].y[i];
      if (!std::isfinite(v)) continue;
      const double bx = centres[i] - bar * static_cast<double>(k) / 2 + bar * static_cast<double>(j);
      s += "<rect x=\"" + fmt("%.2f", bx) + "\" y=\"" + fmt("%.2f", y.at(v)) + "\" width=\"" + fmt("%.2f", bar - 1) +
           "\" height=\"" + fmt("%.2f", y.at(0) - y.at(v)) + "\" fill=\"" + series[j].colour + "\"><title>" +
           escape(series[j].label + " at " + categories[i] + ": " + fmt("%.4g", v)) + "</title></rect>";
    }
  return s + legend + "</svg>";
}

}  // namespace exasim::html::internal
