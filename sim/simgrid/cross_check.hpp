#pragma once
// The cross-check of the fast flow core against SimGrid: the same 4D plan on the same machine through
// both runtimes. Shared by simgrid_runtime_test.cpp (which holds the two within 1%) and
// bench/simgrid (which prints the table). No SimGrid type here.

#include "sim/runtime/runtime.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "topologies/routing.hpp"
#include "topologies/topology.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace exasim::sg {

/// Routes like `inner`, but keys each flow by (source, destination, how many flows that pair had
/// before), whatever key the runtime passes. The fast core keys flows by its global launch count,
/// which depends on how it orders simultaneous launches, and SimGrid orders them differently; with
/// this wrapper both backends route every flow the same way, so the comparison tests the simulators,
/// not the keying. Not needed once the fast core keys flows by identity (flow_key.hpp).
class PairSequencedKeys final : public topo::Topology {
 public:
  explicit PairSequencedKeys(const topo::Topology& inner);
  [[nodiscard]] std::string describe() const override { return inner_.describe(); }
  [[nodiscard]] std::uint32_t gpu_count() const override { return inner_.gpu_count(); }
  [[nodiscard]] std::uint32_t gpus_per_node() const override { return inner_.gpus_per_node(); }
  [[nodiscard]] std::uint32_t nics_per_node() const override { return inner_.nics_per_node(); }
  [[nodiscard]] std::uint32_t switch_count() const override { return inner_.switch_count(); }
  [[nodiscard]] topo::LinkEnds link_ends(topo::LinkId link) const override { return inner_.link_ends(link); }
  [[nodiscard]] topo::TopologySummary summary() const override;
  void route(topo::GpuId src, topo::GpuId dst, std::uint64_t flow_key, const topo::LinkLoadView* load,
             std::vector<topo::LinkId>& out) const override;

 private:
  const topo::Topology& inner_;
  mutable std::map<std::uint64_t, std::uint64_t> sequence_;
};

/// Nodes of 4 GPUs (100 GB/s pairs) and 2 NICs (25 GB/s) under one switch.
[[nodiscard]] std::unique_ptr<topo::Topology> cross_check_single_switch(std::uint32_t nodes);
/// Same nodes on a 1D dragonfly, 2 global links per group pair at half the local bandwidth, so that
/// flows meet on global links. GPUs: groups x (switches / 2) x endpoints x 4.
[[nodiscard]] std::unique_ptr<topo::Topology> cross_check_dragonfly(std::uint32_t groups, std::uint32_t switches,
                                                                    std::uint32_t endpoints,
                                                                    topo::RoutingPolicy routing);

struct CrossCheckCase {
  std::string machine;
  std::function<std::unique_ptr<topo::Topology>()> make_machine;
  schedule::Axonn4DConfig grid;
  bool overlap = true;
};

struct CrossCheckResult {
  std::uint32_t gpus = 0;
  runtime::RunResult fast;
  runtime::RunResult simgrid;
  [[nodiscard]] double difference_percent() const {
    return 100.0 * (simgrid.iteration_s - fast.iteration_s) / fast.iteration_s;
  }
};

/// Builds the case's plan (a small 2-layer model, kernels of 20-38 us, 1 us per ring step) and runs it
/// on both backends, each on a fresh PairSequencedKeys over a fresh machine.
[[nodiscard]] CrossCheckResult run_cross_check(const CrossCheckCase& c);

}  // namespace exasim::sg
