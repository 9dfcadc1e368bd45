#include "sim/html/internal/timeline.hpp"

#include "sim/html/internal/svg.hpp"

#include <algorithm>
#include <map>

namespace exasim::html::internal {

namespace {

constexpr int kMaxSublanes = 3;
constexpr double kMergeFraction = 1.0 / 64000;  // 1/64 of a pixel of 1,000 at full zoom-out: see the header

bool is_compute(const std::string& kind) { return kind == "gemm" || kind == "attention" || kind == "memory"; }

/// Merges neighbours (by start time) of equal key whose gap is at most `eps`.
std::vector<Block> merge(std::vector<Block> blocks, double eps) {
  std::vector<Block> out;
  for (auto& b : blocks) {
    if (!out.empty() && out.back().key == b.key && b.t0 - out.back().t1 <= eps) {
      auto& m = out.back();
      m.t1 = std::max(m.t1, b.t1);
      m.last = b.count > 1 ? b.last : b.first;
      m.count += b.count;
    } else {
      out.push_back(std::move(b));
    }
  }
  return out;
}

/// Runs of blocks of any kind with gaps of at most `eps` or a quarter span (too short to see at that
/// resolution), each run cut into spans of at most `span`
/// seconds, each span one block of the key that holds most of its time ("mostly"); idle gaps stay blank.
std::vector<Block> coarsen(const std::vector<Block>& blocks, double eps, double span) {
  std::vector<Block> out;
  std::map<std::string, double> time_of;
  const auto close = [&] {
    auto& m = out.back();
    double best = -1;
    for (const auto& [key, t] : time_of)
      if (t > best) {
        best = t;
        m.key = key;
      }
    m.mostly = m.t1 > m.t0 ? best / (m.t1 - m.t0) : 1;
    time_of.clear();
  };
  for (const auto& b : blocks) {
    if (!out.empty() && b.t0 - out.back().t1 <= std::max(eps, span / 4) && b.t1 - out.back().t0 <= span) {
      auto& m = out.back();
      m.t1 = std::max(m.t1, b.t1);
      m.last = b.count > 1 ? b.last : b.first;
      m.count += b.count;
    } else {
      if (!out.empty()) close();
      out.push_back(b);
    }
    time_of[b.key] += b.t1 - b.t0;
  }
  if (!out.empty()) close();
  return out;
}

void pack_sublanes(RankLanes& lanes) {
  std::vector<double> ends;
  for (auto& b : lanes.comm) {
    int lane = -1;
    for (std::size_t k = 0; k < ends.size(); ++k)
      if (ends[k] <= b.t0) {
        lane = static_cast<int>(k);
        break;
      }
    if (lane < 0 && static_cast<int>(ends.size()) < kMaxSublanes) {
      ends.push_back(0);
      lane = static_cast<int>(ends.size()) - 1;
    }
    if (lane < 0) lane = kMaxSublanes - 1;
    b.sublane = lane;
    ends[static_cast<std::size_t>(lane)] = std::max(ends[static_cast<std::size_t>(lane)], b.t1);
  }
  lanes.comm_sublanes = std::max(1, static_cast<int>(ends.size()));
}

std::string colour_of(const std::string& key) {
  if (key.rfind("wait:", 0) == 0) return dim_colour(key.substr(5));
  if (key.rfind("comm:", 0) == 0) return dim_colour(key.substr(5));
  return compute_colour(key == "compute" ? "gemm" : key);
}

std::string tooltip(std::uint32_t rank, const Block& b) {
  std::string what;
  if (b.key.rfind("wait:", 0) == 0)
    what = "wait on " + b.key.substr(5);
  else if (b.key.rfind("comm:", 0) == 0)
    what = b.key.substr(5) + " communication in flight";
  else
    what = b.key;
  std::string text = "rank " + std::to_string(rank) + " | " + what + " | ";
  if (b.mostly < 1)
    text = "rank " + std::to_string(rank) + " | mostly " + what + " (" + fmt("%.0f%%", 100 * b.mostly) + ") | ";
  text += b.count > 1 ? std::to_string(b.count) + " ops " + b.first + " ... " + b.last : b.first;
  return text + " | " + duration(b.t1 - b.t0) + " (" + duration(b.t0) + " to " + duration(b.t1) + ")";
}

}  // namespace

Timeline build_timeline(const std::vector<trace::TraceRow>& rows, double iteration_s, std::size_t max_blocks,
                        std::size_t max_ranks) {
  Timeline t;
  std::map<std::uint32_t, RankLanes> by_rank;
  double last_end = 0;
  for (const auto& r : rows) {
    auto [it, inserted] = by_rank.try_emplace(r.rank);
    if (inserted) it->second.rank = r.rank;
    last_end = std::max(last_end, r.t_end_s);
  }
  t.ranks_in_trace = by_rank.size();
  t.end_s = iteration_s > 0 ? std::max(iteration_s, last_end) : last_end;
  std::size_t kept = 0;
  for (auto it = by_rank.begin(); it != by_rank.end();) {
    if (kept++ < max_ranks)
      ++it;
    else
      it = by_rank.erase(it);
  }
  for (const auto& r : rows) {
    auto it = by_rank.find(r.rank);
    if (it == by_rank.end()) continue;
    ++t.rows;
    Block b{r.t_start_s, r.t_end_s, "", r.op, r.op, 1, 1, 0};
    if (is_compute(r.kind)) {
      b.key = r.kind;
      if (std::find(t.kinds.begin(), t.kinds.end(), r.kind) == t.kinds.end()) t.kinds.push_back(r.kind);
      it->second.work.push_back(std::move(b));
      continue;
    }
    if (std::find(t.dims.begin(), t.dims.end(), r.dim) == t.dims.end()) t.dims.push_back(r.dim);
    if (r.kind == "wait") {
      if (r.t_end_s <= r.t_start_s) continue;  // a collective that was done before the rank asked: no wait
      b.key = "wait:" + r.dim;
      it->second.work.push_back(std::move(b));
    } else {
      b.key = "comm:" + r.dim;
      it->second.comm.push_back(std::move(b));
    }
  }
  const std::size_t budget = std::max<std::size_t>(50, by_rank.empty() ? max_blocks : max_blocks / by_rank.size());
  const double eps = t.end_s * kMergeFraction;
  for (auto& [rank, lanes] : by_rank) {
    const auto by_start = [](const Block& a, const Block& b) { return a.t0 < b.t0; };
    std::stable_sort(lanes.work.begin(), lanes.work.end(), by_start);
    std::stable_sort(lanes.comm.begin(), lanes.comm.end(), by_start);
    const auto size = [&] { return lanes.work.size() + lanes.comm.size(); };
    int step = 0;
    if (size() > budget) {
      step = 1;
      lanes.work = merge(std::move(lanes.work), eps);
      lanes.comm = merge(std::move(lanes.comm), eps);
    }
    if (size() > budget) {
      step = 2;
      for (auto& b : lanes.work)
        if (is_compute(b.key)) b.key = "compute";
      lanes.work = merge(std::move(lanes.work), eps);
    }
    // Coarser and coarser spans, from 1/1000 of the iteration (1 px at full zoom-out), until it fits.
    // Each try starts again from the blocks of step 2, so that "mostly" counts the ops themselves.
    const auto work = lanes.work, comm = lanes.comm;
    for (double span = t.end_s / 1000; size() > budget && span <= 2 * t.end_s; span *= 2) {
      step = 3;
      lanes.work = coarsen(work, eps, span);
      lanes.comm = coarsen(comm, eps, span);
    }
    t.reduction_step = std::max(t.reduction_step, step);
    pack_sublanes(lanes);
    t.blocks += size();
    t.ranks.push_back(std::move(lanes));
  }
  return t;
}

std::string timeline_svg(const Timeline& t) {
  const double label_w = 86, plot_w = 1100, axis_h = 26, work_h = 18, sub_h = 7, gap = 10;
  double plot_h = 0;
  for (const auto& r : t.ranks) plot_h += work_h + 2 + sub_h * r.comm_sublanes + gap;
  const double width = label_w + plot_w + 10, height = axis_h + plot_h + 4;
  const double scale = t.end_s > 0 ? plot_w / t.end_s : 1;
  std::string s = "<svg id=\"timeline\" class=\"chart timeline\" viewBox=\"0 0 " + fmt("%.0f", width) + " " +
                  fmt("%.0f", height) + "\" data-end-s=\"" + fmt("%.17g", t.end_s) + "\" role=\"img\">";
  // The axis: drawn here for the whole iteration, redrawn by the page's script on zoom.
  s += "<g id=\"timeline-axis\" transform=\"translate(" + fmt("%.0f", label_w) + ",0)\">";
  for (double tick : nice_ticks(0, t.end_s, 10)) {
    const double x = tick * scale;
    s += "<line x1=\"" + fmt("%.2f", x) + "\" x2=\"" + fmt("%.2f", x) + "\" y1=\"" + fmt("%.0f", axis_h - 6) +
         "\" y2=\"" + fmt("%.0f", height) + "\" class=\"grid\"/><text x=\"" + fmt("%.2f", x) + "\" y=\"" +
         fmt("%.0f", axis_h - 10) + "\" text-anchor=\"middle\">" + duration(tick) + "</text>";
  }
  s += "</g>";
  double y = axis_h;
  std::string labels, blocks;
  for (const auto& r : t.ranks) {
    labels += "<text x=\"" + fmt("%.0f", label_w - 8) + "\" y=\"" + fmt("%.0f", y + 13) +
              "\" text-anchor=\"end\" class=\"rank-label\">rank " + std::to_string(r.rank) + "</text>";
    labels += "<text x=\"" + fmt("%.0f", label_w - 8) + "\" y=\"" + fmt("%.0f", y + work_h + 2 + sub_h * 1.2) +
              "\" text-anchor=\"end\" class=\"lane-label\">comm</text>";
    const auto draw = [&](const Block& b, double by, double bh, const char* cls) {
      blocks += "<rect class=\"" + std::string(cls) + "\" x=\"" + fmt("%.3f", b.t0 * scale) + "\" y=\"" +
                fmt("%.1f", by) + "\" width=\"" + fmt("%.3f", std::max(0.0, (b.t1 - b.t0) * scale)) + "\" height=\"" +
                fmt("%.1f", bh) + "\" fill=\"" + colour_of(b.key) + "\"><title>" + escape(tooltip(r.rank, b)) +
                "</title></rect>";
    };
    blocks += "<rect class=\"lane-bg\" x=\"0\" y=\"" + fmt("%.1f", y) + "\" width=\"" + fmt("%.0f", plot_w) +
              "\" height=\"" + fmt("%.1f", work_h) + "\"/>";
    for (const auto& b : r.work) draw(b, y, work_h, b.key.rfind("wait:", 0) == 0 ? "ev wait" : "ev compute");
    for (const auto& b : r.comm) draw(b, y + work_h + 2 + sub_h * b.sublane, sub_h - 1, "ev comm");
    y += work_h + 2 + sub_h * r.comm_sublanes + gap;
  }
  s += labels;
  // The zoomable part: the page's script changes this nested SVG's viewBox (x only).
  s += "<svg id=\"timeline-plot\" x=\"" + fmt("%.0f", label_w) + "\" y=\"" + fmt("%.0f", axis_h) + "\" width=\"" +
       fmt("%.0f", plot_w) + "\" height=\"" + fmt("%.0f", plot_h) + "\" viewBox=\"0 " + fmt("%.0f", axis_h) + " " +
       fmt("%.0f", plot_w) + " " + fmt("%.0f", plot_h) + "\" preserveAspectRatio=\"none\">" + blocks + "</svg>";
  return s + "</svg>";
}

}  // namespace exasim::html::internal
