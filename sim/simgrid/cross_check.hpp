#pragma once
// The cross-check of the fast flow core against SimGrid: the same 4D plan on the same machine through
// both runtimes. Shared by simgrid_runtime_test.cpp (which holds the two within 1%) and
// bench/simgrid (which prints the table). No SimGrid type here.

#include "sim/exec/stage_router.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "topologies/routing.hpp"
#include "topologies/topology.hpp"

#include <functional>
#include <memory>
#include <string>

namespace exasim::sg {

/// Nodes of 4 GPUs (100 GB/s pairs) and 2 NICs (25 GB/s) under one switch.
[[nodiscard]] std::unique_ptr<topo::Topology> cross_check_single_switch(std::uint32_t nodes);
/// Same nodes on a 1D dragonfly, 2 global links per group pair at half the local bandwidth, so that
/// flows meet on global links. GPUs: groups x (switches / 2) x endpoints x 4. `adaptive_parts`: see
/// topologies/dragonfly.hpp.
[[nodiscard]] std::unique_ptr<topo::Topology> cross_check_dragonfly(std::uint32_t groups, std::uint32_t switches,
                                                                    std::uint32_t endpoints,
                                                                    topo::RoutingPolicy routing,
                                                                    std::uint32_t adaptive_parts = 1);

struct CrossCheckCase {
  std::string machine;
  std::function<std::unique_ptr<topo::Topology>()> make_machine;
  schedule::Axonn4DConfig grid;
  bool overlap = true;
  const exec::StageRouter* router = nullptr;                        ///< both backends' (null: the collectives router)
  collectives::Algorithm algorithm = collectives::Algorithm::Ring;  ///< the job's collective algorithm
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
/// on both backends, each on a fresh machine. Both key flows by identity (sim/collectives/flow_key.hpp), so
/// they route every flow the same way and the comparison tests the simulators.
[[nodiscard]] CrossCheckResult run_cross_check(const CrossCheckCase& c);

}  // namespace exasim::sg
