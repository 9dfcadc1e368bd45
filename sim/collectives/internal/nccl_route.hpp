#pragma once
// Routing of `collectives.algorithm: nccl` (nccl_tuner.hpp chooses, this routes the choice). Internal to
// sim/collectives: algorithms/nccl.cpp defines it and registers it.
//
// NCCL's rings and trees as flows:
//  - channels over rails: where a node holds L > 1 of the group's members that send through k > 1
//    distinct NICs, the collective runs as k channels, each carrying 1/k of the bytes. Channel c's rail
//    member on each node is the one at position c x L / k of the node's members (group order): its NIC
//    is rail c. Every rail carries 1/k of the traffic, and between nodes it stays on its rail, as NCCL's
//    rail-local rings do (a rail-optimised fat tree then never crosses its spines). Elsewhere (one
//    node, one member per node, uneven layouts) there is one channel;
//  - ring: one channel: one bundle over the members node-major (nodes by id, members in group order);
//    k channels: per channel one bundle that enters each node at its rail member, visits the node's
//    other members in rotated order, hops from the last back to the rail member over NVLink (PXN: the
//    data leaves through the rail's NIC, not the last member's) and on to the next node's rail member;
//  - tree (all-reduce across nodes): per channel, NCCL's double binary tree over each node's rail
//    member, two bundles (one per tree), S/2/k a hop; the chain inside each node is in the latency only
//    (NVLink is not the bottleneck of a tree between nodes);
//  - bytes: each hop carries its payload x (the physical bus bandwidth / the chosen protocol's bus
//    bandwidth as the tuner costs it), so that an unloaded collective takes the tuner's bandwidth time
//    on the physical links, and loaded links share as the flow network shares them; LL's flags and
//    LL128's headers take link capacity, as they do on the wire;
//  - latency: the tuner's latency of the choice, paid once (the route latencies and the machine's
//    per-step overhead are not added: the library's hardware latencies stand for them).
//
// LIMITATIONS: the physical bus bandwidth is sampled (the slowest of the first node's consecutive
// member hops, one hop to the next node); rank 0's wire bytes are the ring's payload whichever
// algorithm runs; rails are assumed to line up by position in group order on every node.

#include "sim/collectives/nccl_tuner.hpp"
#include "sim/collectives/router.hpp"

namespace exasim::collectives {

/// Routes `call` as NCCL would run it, under call.nccl (which must be set), into `out`.
void route_nccl(const topo::Topology& topology, const GroupCall& call, const topo::LinkLoadView* load,
                const OnHop& on_hop, StageRoute& out);

}  // namespace exasim::collectives
