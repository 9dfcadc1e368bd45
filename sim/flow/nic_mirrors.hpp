#pragma once
// Which NICs' two links a job's traffic crosses equally often, route by route: FlowNetwork may then
// leave the down link out of every path (FlowNetwork::set_mirrored()), the same answers from ~17 %
// fewer route entries on a spread run.
//
// Every topology here routes an inter-node hop out of its source GPU's NIC (up link) and into its
// destination GPU's NIC (down link), a NIC fixed per GPU (NodeLinks::nic_of_gpu()), and a hop inside
// a node crosses no NIC. A ring bundle over members on distinct nodes then crosses each member's NIC
// once up (its hop out) and once down (its hop in); a double binary tree's bundle crosses every edge
// both ways. So a NIC stays mirrored unless
//  - the plan has point-to-point transfers (a pipeline's Send/Recv: one hop, one way), or its
//    collectives run as single hops (collectives::bundles_are_cycles false: direct): then none is;
//  - a collective group that spans nodes has two members on one node (a ring can leave that node
//    through one NIC and enter it through another, and the hierarchical algorithm may run): the NICs
//    of those nodes are not;
//  - its up and down links differ in bandwidth.
// FlowNetwork checks every route it is given and throws std::logic_error if one crosses a pair
// unequally, so a case missed here fails loudly rather than giving a wrong rate.
//
// LIMITATIONS: only for the collectives router (a router injected by tests may shape bundles
// otherwise: none mirrored); conservative (a node with two members of one group loses all its NICs'
// mirrors, though a ring whose co-located members share a NIC would keep them); plans with any
// point-to-point transfer get no mirrors at all.

#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <utility>
#include <vector>

namespace exasim::flow {

/// The (up, down) link pairs of the NICs whose links every route of `job` crosses equally often.
[[nodiscard]] std::vector<std::pair<topo::LinkId, topo::LinkId>> mirrored_nic_pairs(const topo::Topology& topology,
                                                                                    const runtime::Job& job);

}  // namespace exasim::flow
