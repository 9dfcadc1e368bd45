#pragma once
// Which algorithm each collective of the emulation runs, and where a group's members sit on nodes (what
// the hierarchical algorithm splits by). No MPI here, so that the rule is unit-tested without mpirun.
//
// The scenario's collectives.algorithm (Job::collective_algorithm) applies per collective as in the
// simulator (sim/collectives/algorithm.hpp): tree runs all-reduces only (all-gather and reduce-scatter
// stay rings, as in NCCL); hierarchical runs only where the group spans more than one node and every
// node holds the same number L > 1 of its members (else ring); auto is whatever
// collectives::resolve_algorithm picks, called here rather than re-derived so that emulation and
// simulation run the same algorithm.
//
// LIMITATIONS: the node of a member is topology.node_of(job.gpu(rank)): the scenario's machine and
// placement. `exasim validate` simulates on the calibrated host, which keeps that node size
// (validate/calibration_fit.hpp, machine_with_node_size) so that both sides split groups alike.

#include "sim/collectives/algorithm.hpp"
#include "sim/collectives/router.hpp"
#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <cstddef>
#include <cstdint>

namespace exasim::emu {

/// One member's view of its group along a grid dimension.
struct GroupLayout {
  std::uint32_t members = 1;
  std::uint32_t nodes = 1;        ///< distinct nodes the members are on
  std::uint32_t per_node = 0;     ///< L, when every one of those nodes holds as many members; else 0
  std::uint32_t node = 0;         ///< this member's node (the topology's number)
  std::uint32_t local_index = 0;  ///< this member's position among its node's members, in group order

  /// Whether the hierarchical algorithm applies to this group.
  [[nodiscard]] bool hierarchical() const { return nodes > 1 && per_node > 1; }
};

[[nodiscard]] GroupLayout group_layout(const runtime::Job& job, const topo::Topology& topology, schedule::Rank rank,
                                       std::size_t dim);

/// The algorithm `call` (a collective, never Send/Recv) runs under `requested`: never Auto. Throws
/// std::logic_error if resolve_algorithm picks an algorithm that cannot run here (hierarchical on a
/// group the layout rules out, tree for anything but an all-reduce): the two rules disagree.
[[nodiscard]] collectives::Algorithm emulated_algorithm(collectives::Algorithm requested,
                                                        const topo::Topology& topology,
                                                        const collectives::GroupCall& call, const GroupLayout& layout);

}  // namespace exasim::emu
