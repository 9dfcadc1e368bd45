#pragma once
// Helpers shared by the collectives tests (not part of the library): route every stage of a collective
// and read back, hop by hop, who sends to whom in which bundle.

#include "sim/collectives/router.hpp"
#include "topologies/single_switch.hpp"

#include <map>
#include <vector>

namespace exasim::collectives::testing {

/// simple-a100's shape (topologies/presets/simple-a100.json): nodes of 4 GPUs linked all-to-all at
/// 100 GB/s and 1 us, 4 NICs of 25 GB/s and 1 us, one switch of 350 ns. An inter-node hop costs
/// 2.35 us (NIC up + switch, NIC down).
inline topo::SingleSwitch simple_a100(std::uint32_t nodes, std::uint32_t nics = 4) {
  topo::SingleSwitchParams p;
  p.node = {4, 100e9, 1e-6, nics, 25e9, 1e-6};
  p.nodes = nodes;
  p.switch_latency_s = 3.5e-7;
  return topo::SingleSwitch(p);
}

/// A collective of `kind` over `bytes` by the group of rank 0 along `dim`.
inline GroupCall call_of(const schedule::ProcessGrid& grid, std::uint8_t dim, CollKind kind, double bytes,
                         double step_overhead_s, const std::vector<std::uint32_t>* gpu_of_rank = nullptr) {
  return {.grid = &grid,
          .gpu_of_rank = gpu_of_rank,
          .step_overhead_s = step_overhead_s,
          .dim = dim,
          .kind = kind,
          .bytes = bytes};
}

/// One routed hop: the GPUs at its ends (a NIC vertex stands for the GPU of the same index, which holds
/// on the test machines: as many NICs as GPUs per node), its bundle and its route latency.
struct RoutedHop {
  topo::GpuId src = 0, dst = 0;
  std::size_t bundle = 0;
  double latency_s = 0;
  std::vector<topo::LinkId> links;  ///< its route
};

struct RoutedStage {
  StageRoute route;
  std::vector<RoutedHop> hops;
};

/// Routes stage `stage` of `call`, recording each hop as on_hop reports it.
inline RoutedStage route_one(Algorithm algorithm, const topo::Topology& topology, const GroupCall& call,
                             std::uint32_t stage) {
  RoutedStage rs;
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // (offset, count) in route.links
  const OnHop on_hop = [&](const topo::LinkId* links, std::size_t count) {
    spans.emplace_back(static_cast<std::size_t>(links - rs.route.links.data()), count);
  };
  route_stage(algorithm, topology, call, stage, nullptr, on_hop, rs.route);
  for (auto [offset, count] : spans) {
    RoutedHop hop;
    const auto& links = rs.route.links;
    hop.src = topology.link_ends(links[offset]).from.index;
    hop.dst = topology.link_ends(links[offset + count - 1]).to.index;
    hop.latency_s = topology.latency_s(links.data() + offset, count);
    hop.links.assign(links.begin() + static_cast<std::ptrdiff_t>(offset),
                     links.begin() + static_cast<std::ptrdiff_t>(offset + count));
    while (hop.bundle < rs.route.bundles.size() &&
           offset >= rs.route.bundles[hop.bundle].begin + rs.route.bundles[hop.bundle].count)
      ++hop.bundle;
    rs.hops.push_back(hop);
  }
  return rs;
}

/// Every stage of `call` under a resolved algorithm.
inline std::vector<RoutedStage> route_all(Algorithm algorithm, const topo::Topology& topology, const GroupCall& call) {
  std::vector<RoutedStage> stages;
  for (std::uint32_t s = 0; s < stage_count(algorithm, topology, call); ++s)
    stages.push_back(route_one(algorithm, topology, call, s));
  return stages;
}

/// Bytes each GPU sends in one stage: its hops' bundle bytes.
inline std::map<topo::GpuId, double> sent_by_gpu(const RoutedStage& stage) {
  std::map<topo::GpuId, double> sent;
  for (const auto& hop : stage.hops) sent[hop.src] += stage.route.bundles.at(hop.bundle).bytes;
  return sent;
}

/// The slowest hop's route latency of a stage.
inline double slowest_hop_s(const RoutedStage& stage) {
  double most = 0;
  for (const auto& hop : stage.hops) most = std::max(most, hop.latency_s);
  return most;
}

}  // namespace exasim::collectives::testing
