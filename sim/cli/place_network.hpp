#pragma once
// place_network.json, written by `exasim place --out` beside place.csv and read by `exasim report`: where
// the plan and its baseline (packed on the whole machine, the scheduler's order with --nodes) put the
// job on the network, and what the network carried under each. Per placement:
//  - "groups": the network groups (Dragonfly groups; one group on a single switch) holding ranks of the
//    job, each with its rank count and its ranks as ranges ("0-63,128-191");
//  - "hot_links": the hottest links by utilisation, as `simulate --links` lists them (null when the
//    links were not metered: under layer sampling);
//  - "hot_group_pairs": the group pairs whose global links carried the most bytes (null unmetered, empty
//    on a network of one group).
// Top level: "groups" (the machine's group count) and "group_gpus" (GPUs per group), "plan" and
// "baseline" (null when no such baseline was simulated). The baseline's links are metered by one more
// simulation when the plan's were and the baseline is another placement.
//
// LIMITATIONS: a group's rank ranges are cut after 16 ranges ("..." follows); group pairs count global
// links only (report/link_report.hpp).

#include "sim/report/link_report.hpp"
#include "sim/scenario/scenario.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace exasim::cli {

/// One placement of the job: its name, the GPU of every rank, its metered links (nullptr: unmetered).
struct PlacedRanks {
  std::string label;
  const std::vector<std::uint32_t>* gpu_of_rank = nullptr;
  const report::LinkReport* links = nullptr;
};

/// The document above. `baseline` nullptr: none simulated; `hottest`: links and group pairs listed.
[[nodiscard]] nlohmann::ordered_json place_network_json(const scenario::Scenario& base, const PlacedRanks& plan,
                                                        const PlacedRanks* baseline, std::size_t hottest);

}  // namespace exasim::cli
