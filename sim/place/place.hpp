#pragma once
// The placement search of `exasim place` (docs/place.md): which GPU each rank of a job runs on, so that
// the collectives of the process grid load the network as little as possible.
//
// A placement is built in two steps. A node order lists the job's nodes (slot s of the job is local GPU
// s % gpus_per_node of node order[s / gpus_per_node]): packed groups, round-robin over G groups in blocks
// of k nodes, random draws, or the allocation's own order. A dimension order says which grid dimension is
// innermost in the slots: with (z, x, y, data), the 8 members of a z group share a slot block, and so a
// node, then x, and so on; the packed layout is (x, y, z, data). A candidate is one of each; its rank ->
// GPU vector is what a placement file (`{"policy": "file"}`) holds.
//
// The score of a candidate is the analytic iteration time of `exasim tune` (sim/tune/analytic.hpp):
// one rank's stream replayed with each grid dimension's collectives lasting the ring closed form at the
// ring bandwidth that the routes give under this placement (every member's flow to its ring successor
// routed over the topology with the others as the load; the busiest link's share sets the ring's rate).
// A dimension's ring depends only on the node order and the dimension's slot stride and size, so the
// rings are computed once per node order and distinct (stride, size), and every dimension order is a
// replay of two prebuilt plans (1 and 2 layers). A scheme whose ranks run different streams (Megatron:
// no uniform_plan) is scored by its own tune estimate instead, its rings routed under each candidate's
// rank -> GPU vector (tune::AnalyticModel::set_placement). Views of the grid (nested dimensions) are
// digits of other dimensions: they move with them. The command confirms the best few by full simulation.
//
// LIMITATIONS: a Megatron candidate costs its estimate's probes and rings again (seconds for thousands of
// GPUs); a grid dimension is never split (part of a dimension inside a node, the rest elsewhere) and the
// GPUs inside a node keep the slot order (no search
// over which local GPU gets which rank); the score sees each dimension's rings alone (no contention
// between dimensions, no other jobs); node orders are the families above, not a general search; with a
// budget that runs out, the orders scored depend on the host's speed (the output says so).

#include "sim/scenario/scenario.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace exasim::place {

/// Nodes a job may use: from a `--nodes` file, or every node of the machine.
struct Allocation {
  std::vector<std::uint32_t> nodes;  ///< in the order given (a scheduler's order)
  bool from_file = false;
  std::string source;  ///< the file, for errors and reports
};

/// Reads a node list: node ids separated by newlines or commas, ranges "12-40" (inclusive), '#'
/// comments. InputError naming the file and line when it is missing, malformed, names a node the
/// machine lacks, repeats a node, or lists fewer than `needed` nodes.
[[nodiscard]] Allocation read_allocation(const std::string& path, const topo::Topology& topology, std::uint32_t needed);
/// Every node of the machine, in id order.
[[nodiscard]] Allocation whole_machine(const topo::Topology& topology);

/// One way to list the job's nodes.
struct NodeOrder {
  std::string label;                 ///< "packed", "round-robin 8 groups x 4 nodes", "random 2", ...
  std::vector<std::uint32_t> nodes;  ///< exactly the nodes the job needs, slot order
  bool baseline = false;             ///< simulated with the grid's own layout whatever its score
};

/// The node orders searched. First the baselines, always scored: the allocation's order ("scheduler"
/// with a file; "packed" on the whole machine, the packed policy), "spread" (the spread policy:
/// round-robin over the allocation's groups, one node at a time) and "random 1".."random 3" (the random
/// policy's draws). Then its nodes packed by group (groups with most allocated nodes first), and
/// round-robin over the G groups with most nodes (G = 1, 2, 4, ... and all) in blocks of k = 1, 2, 4,
/// ... nodes. An order giving the same node list as an earlier one is dropped (a baseline never is).
/// `needed` <= allocation size.
[[nodiscard]] std::vector<NodeOrder> node_orders(const topo::Topology& topology, const Allocation& allocation,
                                                 std::uint32_t needed);
/// The `needed` nodes of `allocation` drawn at random (Fisher-Yates with SplitMix64, as the random policy).
[[nodiscard]] std::vector<std::uint32_t> random_order(const Allocation& allocation, std::uint32_t needed,
                                                      std::uint64_t seed);
/// The spread policy's order: round-robin over all groups of the allocation, one node at a time.
[[nodiscard]] std::vector<std::uint32_t> spread_order(const topo::Topology& topology, const Allocation& allocation,
                                                      std::uint32_t needed);

/// Which local GPU each slot of a node takes (slot i of a node on its local GPU order[i]).
struct LocalOrder {
  std::string label;                ///< "gpus 0,1,3,2,6,7,5,4"
  std::vector<std::uint32_t> gpus;  ///< a permutation of the node's local GPUs
};

/// The local orders searched: the identity, and for each ring size p in `ring_sizes` that divides the
/// GPUs per node (p > 2), the order whose rings of p consecutive slots (each GPU sending to the next,
/// routed on node 0 alone) have the fastest slowest flow (bandwidth / flows on its bottleneck link), then
/// the largest sum of the flows' shares, then the smallest order: every permutation is tried, up to 8 GPUs
/// per node (more: the identity only). On nodes whose GPUs are all alike the identity wins every tie.
[[nodiscard]] std::vector<LocalOrder> local_orders(const topo::Topology& topology,
                                                   const std::vector<std::uint32_t>& ring_sizes);

/// GPU of every rank: slots from `nodes` and `local` (empty: the identity), ranks to slots with grid
/// dimensions `dim_order` innermost first.
[[nodiscard]] std::vector<std::uint32_t> gpu_of_rank(const schedule::ProcessGrid& grid,
                                                     const std::vector<std::uint8_t>& dim_order,
                                                     const std::vector<std::uint32_t>& nodes,
                                                     std::uint32_t gpus_per_node,
                                                     const std::vector<std::uint32_t>& local = {});

/// "x,y,z,data" for a dimension order.
[[nodiscard]] std::string dims_label(const schedule::ProcessGrid& grid, const std::vector<std::uint8_t>& dim_order);

struct Candidate {
  std::size_t order = 0;           ///< index into SearchResult::orders
  std::size_t local = 0;           ///< index into SearchResult::locals
  std::vector<std::uint8_t> dims;  ///< grid dimensions, innermost first
  double analytic_s = 0;           ///< the score
  std::vector<double> ring_Bps;    ///< each grid dimension's ring bandwidth under this placement
};

struct SearchOptions {
  double budget_s = 60;  ///< wall seconds for scoring; past it no further node order is started
};

struct SearchResult {
  schedule::ProcessGrid grid{{}};  ///< the scenario's grid (dimension indices of Candidate::dims)
  std::vector<NodeOrder> orders;   ///< every order generated
  std::vector<LocalOrder> locals;  ///< local GPU orders, the identity first
  std::size_t dim_orders = 0;      ///< distinct grid dimension orders per (node order, local order)
  std::size_t orders_scored = 0;   ///< the first orders_scored of them were scored
  std::vector<Candidate> ranked;   ///< every candidate scored, best score first, then order, local, dims
  std::uint64_t rings_routed = 0;  ///< distinct (order, stride, size) rings routed
  double wall_s = 0;               ///< wall seconds of the search (not an output: wall time)
  [[nodiscard]] bool budget_reached() const { return orders_scored < orders.size(); }
};

/// Scores every (node order, local GPU order, dimension order) of the scenario: by one rank's replay
/// where its scheme has a uniform_plan (AxoNN 4D, FSDP), else by the scheme's tune estimate.
[[nodiscard]] SearchResult search(const scenario::Scenario& scenario, const topo::Topology& topology,
                                  const Allocation& allocation, const SearchOptions& options);

}  // namespace exasim::place
