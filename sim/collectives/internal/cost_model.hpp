#pragma once
// `collectives.algorithm: auto`: an alpha-beta estimate of each applicable algorithm for one collective,
// from its group's shape, its buffer, two sampled hop classes of the topology and the step overhead;
// the fastest wins, ties go to ring (docs/collectives.md has the formulas and the crossovers of the
// shipped machines). NCCL picks its algorithm the same way, from a latency + size / bandwidth model per
// algorithm and protocol; exasim's figures are its own, not NCCL's tuning tables.
//
// LIMITATIONS: one sampled route per hop class (member 0 to a member on its node, and to a member on
// another node), unloaded and with flow key 0, stands for every hop of that class; contention between
// the hops of one collective is only the NIC sharing of `nic_share`; no protocol choice (LL/LL128/Simple)
// and no chunking, so the estimate of small messages is latency-only.

#include "sim/collectives/algorithm.hpp"
#include "sim/collectives/group_layout.hpp"

#include <cstdint>
#include <limits>

namespace exasim::collectives {

/// A class of hop as the estimate sees it: a route's latency and its slowest link's bandwidth. The
/// defaults are an absent class (no latency, unlimited bandwidth), so max/min over classes ignore it.
struct HopCost {
  double latency_s = 0;
  double bandwidth_Bps = std::numeric_limits<double>::infinity();
};

/// One sampled route's latency and bottleneck bandwidth (unloaded, flow key 0: deterministic).
[[nodiscard]] HopCost sample_hop(const topo::Topology& topology, topo::GpuId src, topo::GpuId dst);

/// What the estimate needs to know about one collective, besides its kind and size.
struct CostInputs {
  std::uint32_t p = 1;         ///< members
  std::uint32_t nodes = 1;     ///< nodes they sit on
  std::uint32_t per_node = 0;  ///< members on every node (0: uneven); hierarchical needs > 1
  HopCost intra;               ///< a hop inside a node (absent when no two members share one)
  HopCost inter;               ///< a hop between nodes (absent when nodes == 1)
  /// Members of one node per NIC they send through (>= 1): when every member crosses the network at
  /// once (tree, hierarchical's inter stage), each gets inter.bandwidth / nic_share. A ring sends one
  /// hop per node across the network and keeps the full bandwidth.
  double nic_share = 1;
  double step_overhead_s = 0;
};

/// Whether `algorithm`, one of auto's candidates (those that register an estimate: ring, tree,
/// hierarchical), can run this collective: ring always, tree an all-reduce of p >= 2, hierarchical a
/// collective (not Send/Recv) over nodes > 1 and per_node > 1. False for the others.
[[nodiscard]] bool applies(Algorithm algorithm, CollKind kind, const CostInputs& in);

/// steps x (alpha + overhead) + bytes / beta per stage, summed (infinity where it does not apply):
///  - ring: ring_steps x (max latency + o) + ring_wire_bytes / min bandwidth;
///  - tree: tree_steps x (max latency + o) + tree_max_wire_bytes / min(intra bw, inter bw / nic_share);
///  - hierarchical: its intra stages at the intra hop, its inter stage at the inter hop with
///    inter bw / nic_share.
[[nodiscard]] double estimate_s(Algorithm algorithm, CollKind kind, const CostInputs& in, double S);

/// The applicable candidate of least estimate, in table order (ring, tree, hierarchical); a later one
/// must be strictly faster to win, so ties go to ring. Never Auto.
[[nodiscard]] Algorithm choose_fastest(CollKind kind, const CostInputs& in, double S);

/// The inputs of `call` on `topology`: the layout's shape, the sampled hops, the NIC sharing of the
/// first node's members (GPU g of a node sends through NIC g x nics / gpus, topologies/node.hpp).
[[nodiscard]] CostInputs cost_inputs(const topo::Topology& topology, const GroupCall& call, const GroupLayout& layout);

}  // namespace exasim::collectives
