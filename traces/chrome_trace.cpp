#include "traces/trace.hpp"

#include "sim/core/output_files.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

namespace exasim::trace {

namespace {

/// A rank's own timeline (compute and waits: one after another on its stream) or a collective or
/// transfer, which runs from post to completion beside them and beside others in flight.
bool on_own_timeline(const TraceRow& r) { return r.dim.empty() || r.kind == "wait"; }

}  // namespace

void write_chrome_json(const std::string& path, const std::vector<TraceRow>& rows, std::uint32_t gpus_per_node) {
  // Processes are nodes, threads are tracks: Perfetto then groups the GPUs of a node together. Each
  // rank has its own timeline on one track and its collectives on as many more as are in flight at
  // once, each event on the first track where the one before it has ended: no two events of a track
  // overlap, which Chrome-trace viewers could not draw.
  const std::uint32_t per_node = gpus_per_node == 0 ? 1 : gpus_per_node;
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TraceRow &x = rows[a], &y = rows[b];
    if (x.rank != y.rank) return x.rank < y.rank;
    if (x.t_start_s != y.t_start_s) return x.t_start_s < y.t_start_s;
    return x.t_end_s > y.t_end_s;
  });
  std::map<std::uint32_t, std::vector<double>> lane_ends;  // per rank: lane 0 its timeline, then collectives
  std::vector<std::uint32_t> lane_of(rows.size(), 0);
  for (const std::size_t i : order) {
    const TraceRow& r = rows[i];
    auto& ends = lane_ends[r.rank];
    if (ends.empty()) ends.push_back(-1e300);
    std::size_t lane = 0;
    if (!on_own_timeline(r)) {
      lane = 1;
      while (lane < ends.size() && ends[lane] > r.t_start_s) ++lane;
      if (lane == ends.size()) ends.push_back(-1e300);
    }
    ends[lane] = std::max(ends[lane], r.t_end_s);
    lane_of[i] = static_cast<std::uint32_t>(lane);
  }
  // Thread ids in rank order, then lane order.
  std::map<std::uint32_t, std::uint32_t> first_tid;
  std::uint32_t next_tid = 0;
  for (const auto& [rank, ends] : lane_ends) {
    first_tid[rank] = next_tid;
    next_tid += static_cast<std::uint32_t>(ends.size());
  }

  nlohmann::json events = nlohmann::json::array();
  for (const std::size_t i : order) {
    const TraceRow& r = rows[i];
    nlohmann::json args = {{"bytes", r.bytes}};
    if (r.flops > 0) args["flops"] = r.flops;
    if (!r.dim.empty()) args["dim"] = r.dim;
    events.push_back({{"name", r.op},
                      {"cat", r.kind},
                      {"ph", "X"},
                      {"ts", r.t_start_s * 1e6},
                      {"dur", (r.t_end_s - r.t_start_s) * 1e6},
                      {"pid", r.rank / per_node},
                      {"tid", first_tid[r.rank] + lane_of[i]},
                      {"args", args}});
  }
  for (const auto& [rank, ends] : lane_ends) {
    for (std::uint32_t lane = 0; lane < ends.size(); ++lane) {
      const std::string name =
          "rank " + std::to_string(rank) + (lane == 0 ? "" : " collectives " + std::to_string(lane));
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", rank / per_node},
                        {"tid", first_tid[rank] + lane},
                        {"args", {{"name", name}}}});
      events.push_back({{"name", "thread_sort_index"},
                        {"ph", "M"},
                        {"pid", rank / per_node},
                        {"tid", first_tid[rank] + lane},
                        {"args", {{"sort_index", first_tid[rank] + lane}}}});
    }
  }
  write_stream_checked(path, [&](std::ostream& out) {
    out << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(
               -1, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  });
}

}  // namespace exasim::trace
