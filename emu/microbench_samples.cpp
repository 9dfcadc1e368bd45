#include "emu/microbench_samples.hpp"

#include "sim/core/json_view.hpp"

namespace exasim::emu {

nlohmann::json to_json(const Microbench& m) {
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : m.samples)
    samples.push_back({{"kind", s.kind},
                       {"group", s.group},
                       {"groups", s.groups},
                       {"bytes", s.bytes},
                       {"time_s", s.time_s},
                       {"op_s", s.op_s}});
  return {{"host", m.host}, {"ranks", m.ranks}, {"poll_interval_s", m.poll_interval_s}, {"samples", samples}};
}

Microbench microbench_from_json(const nlohmann::json& j, const std::string& source) {
  JsonView root(j, source, "");
  root.check_keys({"host", "ranks", "poll_interval_s", "samples"});
  Microbench m;
  m.host = root.string("host");
  m.ranks = static_cast<std::uint32_t>(root.integer("ranks", 2, 1 << 20));
  m.poll_interval_s = root.number("poll_interval_s", 0, 1);
  if (!j.contains("samples") || !j["samples"].is_array()) root.fail("samples", "must be an array");
  for (std::size_t i = 0; i < j["samples"].size(); ++i) {
    JsonView v(j["samples"][i], source, "samples[" + std::to_string(i) + "]");
    v.check_keys({"kind", "group", "groups", "bytes", "time_s", "op_s"});
    Sample s;
    s.kind = v.choice("kind", {"pingpong", "exchange", "all_reduce", "all_gather", "reduce_scatter", "kernel"});
    s.group = static_cast<std::uint32_t>(v.integer("group", 1, 1 << 20));
    s.groups = static_cast<std::uint32_t>(v.integer("groups", 1, 1 << 20));
    s.bytes = v.number("bytes", 0, 1e15, /*min_exclusive=*/false);  // 0 for kernel points
    s.time_s = v.number("time_s", 0, 1e6);
    s.op_s = v.number_or("op_s", 0, 0, 1e3, /*min_exclusive=*/false);
    m.samples.push_back(s);
  }
  return m;
}

}  // namespace exasim::emu
