#pragma once
// Which algorithm each collective of the emulation runs, and where a member of a group sits on the
// nodes (what the hierarchical sub-communicators split by). No MPI here, so that it is unit-tested
// without mpirun.
//
// The algorithm is collectives::resolve_algorithm's, the simulator's own rule (sim/collectives/
// router.hpp; docs/collectives.md): tree for all-reduces of 2 members or more, hierarchical where the
// group spans more than one node with the same L > 1 members on each, auto by the cost model, ring
// otherwise; the registry's emulated_by then names the MPI class that runs it (nccl's is the ring's).
// The emulation calls them rather than re-deriving them, so that both sides run the same algorithm,
// and only checks that it can run the answer.
//
// LIMITATIONS:
//  - the node of a member is topology.node_of(job.gpu(rank)): the scenario's machine and placement.
//    `exasim validate` simulates on the calibrated host, which keeps that node size
//    (validate/internal/calibration_fit.hpp, machine_with_node_size) so that both sides split groups alike;
//  - auto's choice depends on the machine's bandwidths and latencies (cost_model.hpp), which differ
//    between the scenario's machine (the emulation's) and the calibrated one (validate's simulation):
//    under auto the two sides may pick different algorithms (rank0_collectives_by_algorithm says what
//    the emulation ran).

#include "sim/collectives/algorithm.hpp"
#include "sim/collectives/router.hpp"
#include "topologies/topology.hpp"

#include <cstdint>

namespace exasim::emu {

/// Where member `member` of a group sits, as collectives::group_layout lays the group out.
struct MemberPlace {
  bool hierarchical = false;      ///< the group spans N > 1 nodes with the same L > 1 members on each
  std::uint32_t node = 0;         ///< this member's node (the topology's number)
  std::uint32_t local_index = 0;  ///< its position among its node's members, in group order
};

[[nodiscard]] MemberPlace member_place(const topo::Topology& topology, const collectives::GroupCall& call,
                                       std::uint32_t member);

/// The algorithm `call` (a collective, never Send/Recv) runs under `requested`: the one whose MPI class
/// runs resolve_algorithm's answer (collectives::emulated_by: itself, or the ring for nccl), never
/// Auto. Throws std::logic_error when that is one the emulation cannot run here: one that needs node
/// sub-communicators (hierarchical) without them (`hierarchical_ready`: member_place said the group
/// does not split), tree for anything but an all-reduce.
[[nodiscard]] collectives::Algorithm emulated_algorithm(collectives::Algorithm requested,
                                                        const topo::Topology& topology,
                                                        const collectives::GroupCall& call, bool hierarchical_ready);

}  // namespace exasim::emu
