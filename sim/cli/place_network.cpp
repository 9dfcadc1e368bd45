#include "sim/cli/place_network.hpp"

#include "sim/api/simulate.hpp"
#include "sim/scenario/machine.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <tuple>

namespace exasim::cli {

namespace {

constexpr std::size_t kMaxRankRanges = 16;

/// "0-7,16-23": sorted ranks as inclusive ranges, cut after kMaxRankRanges.
std::string rank_ranges(const std::vector<std::uint32_t>& ranks) {
  std::string out;
  std::size_t ranges = 0;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (ranges == kMaxRankRanges) return out + ",...";
    out += (out.empty() ? "" : ",") + std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : "");
    ++ranges;
    i = j + 1;
  }
  return out;
}

nlohmann::ordered_json placement_json(const topo::Topology& topology, const PlacedRanks& p, std::size_t hottest) {
  std::vector<std::vector<std::uint32_t>> by_group(topology.group_count());
  const auto& gpus = *p.gpu_of_rank;
  for (std::size_t r = 0; r < gpus.size(); ++r)
    by_group[topology.group_of_node(topology.node_of(gpus[r]))].push_back(static_cast<std::uint32_t>(r));
  auto groups = nlohmann::ordered_json::array();
  for (std::size_t g = 0; g < by_group.size(); ++g)
    if (!by_group[g].empty())
      groups.push_back({{"group", g}, {"ranks", by_group[g].size()}, {"rank_ranges", rank_ranges(by_group[g])}});
  nlohmann::ordered_json out = {{"placement", p.label}, {"groups", groups}};
  if (p.links == nullptr) {
    out["hot_links"] = nullptr;
    out["hot_group_pairs"] = nullptr;
    return out;
  }
  auto links = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < p.links->hottest.size() && i < hottest; ++i) {
    const auto& h = p.links->hottest[i];
    links.push_back({{"link", h.link},
                     {"class", h.link_class},
                     {"from", h.from},
                     {"to", h.to},
                     {"bytes", h.bytes},
                     {"utilisation", h.utilisation}});
  }
  // The busiest group pairs by bytes, ties by (from, to).
  std::vector<std::tuple<double, std::size_t, std::size_t>> pairs;
  for (std::size_t i = 0; i < p.links->group_bytes.size(); ++i)
    for (std::size_t j = 0; j < p.links->group_bytes[i].size(); ++j)
      if (p.links->group_bytes[i][j] > 0) pairs.emplace_back(p.links->group_bytes[i][j], i, j);
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  auto group_pairs = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < pairs.size() && i < hottest; ++i)
    group_pairs.push_back(
        {{"from", std::get<1>(pairs[i])}, {"to", std::get<2>(pairs[i])}, {"bytes", std::get<0>(pairs[i])}});
  out["hot_links"] = links;
  out["hot_group_pairs"] = group_pairs;
  return out;
}

/// The baseline simulated once more with its links metered, through a placement file in the temp folder.
std::optional<report::LinkReport> meter_links(const scenario::Scenario& base, const std::vector<std::uint32_t>& gpus,
                                              std::size_t hottest) {
  const auto file =
      std::filesystem::temp_directory_path() / (".exasim-place-baseline-" + std::to_string(::getpid()) + ".txt");
  {
    std::ofstream out(file);
    for (const auto g : gpus) out << g << "\n";
  }
  auto doc = base.resolved;
  doc["placement"] = {{"policy", "file"}, {"file", file.string()}};
  api::SimulateOptions metered;
  metered.hottest_links = hottest;
  std::optional<report::LinkReport> links;
  try {
    links = api::simulate(scenario::parse_scenario(doc, base.source), metered).links;
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(file, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::remove(file, ec);
  return links;
}

}  // namespace

nlohmann::ordered_json place_network_json(const scenario::Scenario& base, const PlacedRanks& plan,
                                          const PlacedRanks* baseline, std::size_t hottest) {
  const auto topology = scenario::build_topology(base.machine, base.gpus, base.seed);
  std::vector<std::uint32_t> group_gpus(topology->group_count(), 0);
  for (std::uint32_t node = 0; node < topology->node_count(); ++node)
    group_gpus[topology->group_of_node(node)] += topology->gpus_per_node();
  nlohmann::ordered_json out = {{"groups", topology->group_count()}, {"group_gpus", group_gpus}};
  out["plan"] = placement_json(*topology, plan, hottest);
  if (baseline == nullptr) {
    out["baseline"] = nullptr;
    return out;
  }
  PlacedRanks b = *baseline;
  std::optional<report::LinkReport> metered;
  if (b.links == nullptr && plan.links != nullptr) {
    if (*b.gpu_of_rank == *plan.gpu_of_rank) {
      b.links = plan.links;  // the plan is the baseline
    } else {
      metered = meter_links(base, *b.gpu_of_rank, hottest);
      if (metered) b.links = &*metered;
    }
  }
  out["baseline"] = placement_json(*topology, b, hottest);
  return out;
}

}  // namespace exasim::cli
