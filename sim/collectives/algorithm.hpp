#pragma once
// Collective algorithms, as data: which one a scenario asks for, and the closed forms (wire bytes a
// member sends, sequential steps that each pay a latency) that tests and reports check the routed
// collectives against. No topology here: router.hpp turns a ready collective into routed flows.
// docs/collectives.md derives every formula below; S is the collective's full buffer (CollStart's
// bytes: the all-gather's output, the reduce-scatter's input), p the group size.
//
// The algorithms:
//  - ring: the members in group order form a ring; all-reduce = reduce-scatter + all-gather, each p-1
//    steps of S/p bytes (NCCL/RCCL's default for large messages);
//  - tree: NCCL's double binary tree (double_binary_tree.hpp), all-reduce only (NCCL runs all-gather
//    and reduce-scatter as rings, and so does exasim under `tree`): two binary trees, each carrying
//    half the buffer, reduce up and broadcast down pipelined;
//  - hierarchical: intra-node reduce-scatter, inter-node all-reduce among the members of equal local
//    index (one ring per local index), intra-node all-gather; all-gather: inter-node then intra-node
//    all-gather; reduce-scatter: intra-node then inter-node reduce-scatter;
//  - auto: chosen per collective from its size and group shape (cost_model.hpp);
//  - nccl: what NCCL (RCCL) chooses by its own cost model, ring or tree and a protocol, run over channels
//    striped across the nodes' NIC rails (nccl_tuner.hpp chooses, internal/nccl_route.hpp routes);
//  - direct all-to-all: every member sends S/p to every other member at once. No CollKind names it
//    and no plan emits one yet; router.hpp's route_all_to_all routes it.
//
// LIMITATIONS: no PAT, CollNet/SHARP or NVLS algorithms (nccl_tuner.hpp); rings follow the group's rank order, trees
// span the members in group order (NCCL builds its trees over nodes, with a chain inside each node);
// hierarchical's inter-node stage is always rings, never trees.

#include "sim/schedule/plan.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace exasim::collectives {

using schedule::CollKind;

enum class Algorithm : std::uint8_t { Ring, Tree, Hierarchical, Auto, Nccl };

[[nodiscard]] std::string_view to_string(Algorithm algorithm);
/// "ring", "tree", "hierarchical", "auto" or "nccl"; nullopt for anything else.
[[nodiscard]] std::optional<Algorithm> parse_algorithm(std::string_view name);

// ---- ring ----

// ring_wire_bytes(kind, p, S): bytes each member sends, 2(p-1)/p S for all-reduce, (p-1)/p S for
// all-gather and reduce-scatter; ring_steps(kind, p): 2(p-1) and p-1. The plan's own formulas
// (sim/schedule/plan.hpp), named here so that every algorithm's closed forms sit side by side.
using schedule::ring_steps;
using schedule::ring_wire_bytes;

// ---- tree (all-reduce only) ----

/// Where a tree can run: an all-reduce of two members or more (resolve_algorithm and auto's estimate
/// both ask here).
[[nodiscard]] inline bool tree_applies(CollKind kind, std::uint32_t p) { return kind == CollKind::AllReduce && p >= 2; }

/// Bytes member `member` (0 .. p-1) sends in a double-binary-tree all-reduce: S/2 per tree edge it
/// sits on (up to its parent while reducing, down to each child while broadcasting), over both trees.
/// Members differ: about 2S for most (inner in one tree, a leaf in the other), S/2 x (edges) in general.
[[nodiscard]] double tree_wire_bytes(std::uint32_t p, std::uint32_t member, double S);
/// The largest tree_wire_bytes over the members (what bounds the tree's bandwidth term).
[[nodiscard]] double tree_max_wire_bytes(std::uint32_t p, double S);
/// 2 x the depth of the tree (binary_tree_depth): a reduction climbs it and the broadcast comes back
/// down, one latency per level each way (the pipelined chunks overlap in bandwidth, not in latency).
[[nodiscard]] std::uint32_t tree_steps(std::uint32_t p);

// ---- hierarchical (`nodes` nodes of `per_node` = L members each) ----

/// One stage: a ring collective of `kind` over `ring_size` members and a buffer of `bytes`, inside a
/// node (L members, one ring per node) or across nodes (`nodes` members, one ring per local index).
struct HierarchicalStage {
  bool inter_node = false;
  CollKind kind = CollKind::AllReduce;
  std::uint32_t ring_size = 0;
  double bytes = 0;
};

/// Where the hierarchical stages can run: more than one node, each with the same number L > 1 of the
/// group's members (per_node = 0 when the nodes hold different numbers).
[[nodiscard]] inline bool hierarchical_applies(std::uint32_t nodes, std::uint32_t per_node) {
  return nodes > 1 && per_node > 1;
}

/// 3 for all-reduce (RS intra, AR inter, AG intra), 2 for all-gather (AG inter, AG intra) and
/// reduce-scatter (RS intra, RS inter).
[[nodiscard]] std::uint32_t hierarchical_stage_count(CollKind kind);
/// Stage `stage` (0-based) of the hierarchical `kind` of buffer S. The inter-node stage works on S/L.
[[nodiscard]] HierarchicalStage hierarchical_stage(CollKind kind, std::uint32_t nodes, std::uint32_t per_node, double S,
                                                   std::uint32_t stage);
/// Bytes each member sends in one stage: ring_wire_bytes of the stage's ring.
[[nodiscard]] double hierarchical_stage_wire_bytes(const HierarchicalStage& stage);
/// Sequential steps of one stage: ring_steps of the stage's ring.
[[nodiscard]] std::uint32_t hierarchical_stage_steps(const HierarchicalStage& stage);
/// Sum over the stages. The bytes equal the ring's over p = nodes x L members (2(p-1)/p S for all-reduce);
/// the steps are 2(L-1) + 2(nodes-1) for all-reduce and (L-1) + (nodes-1) otherwise, against the ring's
/// 2(p-1) and p-1.
[[nodiscard]] double hierarchical_wire_bytes(CollKind kind, std::uint32_t nodes, std::uint32_t per_node, double S);
[[nodiscard]] std::uint32_t hierarchical_steps(CollKind kind, std::uint32_t nodes, std::uint32_t per_node);

// ---- direct all-to-all (no CollKind; S: the buffer each member holds, S/p of it for each member) ----

/// (p-1)/p S: S/p to each of the p-1 others.
[[nodiscard]] double all_to_all_wire_bytes(std::uint32_t p, double S);
/// 1 (p > 1): every pair's transfer is posted at once, as NCCL's grouped send/recv all-to-all does.
[[nodiscard]] std::uint32_t all_to_all_steps(std::uint32_t p);

}  // namespace exasim::collectives
