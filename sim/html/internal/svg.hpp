#pragma once
// Small helpers the report's charts share: HTML escaping, locale-free number formatting (the page must
// be byte-identical for the same inputs, so every number goes through snprintf with a fixed format),
// the colour of each grid dimension and compute kind, and the SVG pieces every chart draws (axes with
// ticks, a legend, a horizontal stacked bar, grouped vertical bars).
//
// LIMITATIONS: colours are a fixed palette of eight dimensions (x, y, z, data, tp, dp, pp, cp); any other
// dimension name is drawn grey.

#include <string>
#include <string_view>
#include <vector>

namespace exasim::html::internal {

/// Escapes &, <, >, " and ' for text and attribute values.
[[nodiscard]] std::string escape(std::string_view text);
/// printf-style formatting of one double ("%.4f", "%.3g"): the same bytes on every run and locale.
[[nodiscard]] std::string fmt(const char* format, double value);
/// "4.6179 s", "12.3 ms", "850 us": a duration with 4 significant figures in a fitting unit.
[[nodiscard]] std::string duration(double seconds);
/// "32.2 GB", "1.22 TB": decimal bytes with 3 significant figures.
[[nodiscard]] std::string bytes(double value);

/// Fill colour of a grid dimension ("x", "tp", ...) and of a compute kind ("gemm", "attention", "memory").
[[nodiscard]] std::string dim_colour(std::string_view dim);
[[nodiscard]] std::string compute_colour(std::string_view kind);

/// Tick values for an axis over [lo, hi]: about `target` round numbers (1, 2, 5 x 10^k), lo..hi inclusive.
[[nodiscard]] std::vector<double> nice_ticks(double lo, double hi, int target);

struct Segment {
  std::string label;   ///< legend text
  std::string colour;  ///< CSS colour
  double value = 0;
  std::string shown;  ///< the value as the legend and tooltip print it
};

/// A horizontal stacked bar (`id` on the <svg>): segments left to right over `total` (a value past the
/// segments' sum stays empty, e.g. free memory), with a legend underneath.
[[nodiscard]] std::string stacked_bar(const std::string& id, const std::vector<Segment>& segments, double total,
                                      const std::string& total_label);

/// Horizontal bars, one per row (`id` on the <svg>), labels left, values right; max 0 -> scaled to the largest.
/// With `axis_label`, a value axis under the bars: round ticks, grid lines and the label (the unit).
[[nodiscard]] std::string bar_chart(const std::string& id, const std::vector<Segment>& rows, double max = 0,
                                    const std::string& axis_label = "");

struct Series {
  std::string label;
  std::string colour;
  std::vector<double> y;  ///< one per x; NaN where a point has no value
};

/// A line chart with dots (`id` on the <svg>): x numeric (log2-spaced when `log_x`) or, when `categories`
/// is not empty, the categories evenly spaced. Several series get a legend under the title. The plot
/// leaves room for its last x label, and x labels that would overlap are turned by 35 degrees.
[[nodiscard]] std::string line_chart(const std::string& id, const std::string& title, const std::string& y_label,
                                     const std::vector<double>& x, const std::vector<std::string>& categories,
                                     const std::string& x_label, const std::vector<Series>& series, bool log_x);

/// Vertical bars grouped by category (`id` on the <svg>): per category one bar per series side by side,
/// for an x axis of names (routing=valiant, adaptive) that a line would wrongly join; NaN: no bar.
[[nodiscard]] std::string grouped_bar_chart(const std::string& id, const std::string& title, const std::string& y_label,
                                            const std::vector<std::string>& categories, const std::string& x_label,
                                            const std::vector<Series>& series);

}  // namespace exasim::html::internal
