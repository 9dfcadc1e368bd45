#include "traces/trace.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <stdexcept>

namespace exasim::trace {

void write_chrome_json(const std::string& path, const std::vector<TraceRow>& rows, std::uint32_t gpus_per_node) {
  // Processes are nodes, threads are ranks: Perfetto then groups the GPUs of a node together.
  nlohmann::json events = nlohmann::json::array();
  std::set<std::uint32_t> ranks;
  const std::uint32_t per_node = gpus_per_node == 0 ? 1 : gpus_per_node;
  for (const auto& r : rows) {
    ranks.insert(r.rank);
    nlohmann::json args = {{"bytes", r.bytes}};
    if (r.flops > 0) args["flops"] = r.flops;
    if (!r.dim.empty()) args["dim"] = r.dim;
    events.push_back({{"name", r.op},
                      {"cat", r.kind},
                      {"ph", "X"},
                      {"ts", r.t_start_s * 1e6},
                      {"dur", (r.t_end_s - r.t_start_s) * 1e6},
                      {"pid", r.rank / per_node},
                      {"tid", r.rank},
                      {"args", args}});
  }
  for (auto rank : ranks) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", rank / per_node},
                      {"tid", rank},
                      {"args", {{"name", "rank " + std::to_string(rank)}}}});
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << '\n';
}

}  // namespace exasim::trace
