#pragma once
// Collective algorithms: the registered ones, which one a scenario asks for, and the closed forms (wire
// bytes a member sends, sequential steps that each pay a latency) that tests and reports check the
// routed collectives against. Each algorithm is one file, sim/collectives/algorithms/<name>.cpp, that
// defines its entry of the table (internal/registry.hpp: its name, when it applies, auto's estimate, tune's
// analytic cost, its stages and their routing, how exasim-emu runs it) and one line of
// EXASIM_COLLECTIVE_ALGORITHMS below. Nothing else lists the algorithms: the scenario loader's
// `collectives.algorithm` choice and its error message, auto's candidates, the runtimes' dispatch all
// read the table. docs/collectives.md derives every formula below; S is the collective's full buffer
// (CollStart's bytes: the all-gather's output, the reduce-scatter's input), p the group size.
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
//  - auto: chosen per collective from its size and group shape (cost_model.hpp), among ring, tree and
//    hierarchical;
//  - nccl: what NCCL (RCCL) chooses by its own cost model, ring or tree and a protocol, run over channels
//    striped across the nodes' NIC rails (nccl_tuner.hpp chooses, internal/nccl_route.hpp routes);
//  - direct: every member exchanges with every other member at once (the all-to-all pattern):
//    all-gather and reduce-scatter in one stage of S/p per pair, all-reduce as a direct reduce-scatter
//    then a direct all-gather (the "two-shot" all-reduce of NVSwitch machines).
// An all-to-all (plan.hpp: a mixture of experts' dispatch and combine) runs direct under every choice
// but hierarchical, which runs it in two exchanges where it applies (router.hpp).
//
// LIMITATIONS: no PAT, CollNet/SHARP or NVLS algorithms (nccl_tuner.hpp); rings follow the group's rank order, trees
// span the members in group order (NCCL builds its trees over nodes, with a chain inside each node);
// hierarchical's inter-node stage is always rings, never trees; auto never picks direct (its estimate
// would need the all-pairs contention of the NICs, which the two sampled hops do not see).

#include "sim/schedule/plan.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exasim::collectives {

using schedule::CollKind;

/// The registered algorithms, one line each: X(Enumerator, name) registers the entry that
/// algorithms/<name>.cpp defines as <name>_algorithm() (internal/registry.hpp). The order is auto's
/// order of trial (ties go to the earlier) and the order the scenario loader lists them in.
#define EXASIM_COLLECTIVE_ALGORITHMS(X) \
  X(Ring, ring)                         \
  X(Tree, tree)                         \
  X(Hierarchical, hierarchical)         \
  X(Auto, auto)                         \
  X(Nccl, nccl)                         \
  X(Direct, direct)

#define EXASIM_ALGORITHM_ENUMERATOR(enumerator, name) enumerator,
enum class Algorithm : std::uint8_t { EXASIM_COLLECTIVE_ALGORITHMS(EXASIM_ALGORITHM_ENUMERATOR) };
#undef EXASIM_ALGORITHM_ENUMERATOR
#define EXASIM_ALGORITHM_COUNT(enumerator, name) +1
inline constexpr std::size_t kAlgorithmCount = 0 EXASIM_COLLECTIVE_ALGORITHMS(EXASIM_ALGORITHM_COUNT);
#undef EXASIM_ALGORITHM_COUNT

/// Its registered name ("ring", "tree", ...): what `collectives.algorithm` says.
[[nodiscard]] std::string_view to_string(Algorithm algorithm);
/// The algorithm of that name; nullopt for anything else.
[[nodiscard]] std::optional<Algorithm> parse_algorithm(std::string_view name);
/// Every registered algorithm, in table order.
#define EXASIM_ALGORITHM_VALUE(enumerator, name) Algorithm::enumerator,
inline constexpr std::array<Algorithm, kAlgorithmCount> kAlgorithms = {
    EXASIM_COLLECTIVE_ALGORITHMS(EXASIM_ALGORITHM_VALUE)};
#undef EXASIM_ALGORITHM_VALUE
/// The registered names, comma-separated in table order ("ring, tree, ..."): what error messages list.
[[nodiscard]] std::string algorithm_names();

/// The algorithm whose MPI class runs `resolved` in exasim-emu (emu/collectives/pending_comm.cpp holds
/// one per algorithm it can run): itself, or another's (nccl: the ring; the MPI host has no GPU
/// library to model). Auto for auto, which never runs as itself.
[[nodiscard]] Algorithm emulated_by(Algorithm resolved);
/// Whether a collective under `requested` may join any two members of its group in one bundle (trees,
/// NCCL's node-major rings, direct exchanges), not only consecutive members: the flow core then cannot
/// assume that a ring stays inside a node or leaves it at every hop.
[[nodiscard]] bool joins_any_members(Algorithm requested);
/// Whether every bundle of a collective under `requested` is a closed walk (a ring, a tree's edges up
/// and down), so that it crosses each link as often one way as the other between a node and its NIC:
/// true but for direct, whose bundles are single hops. The flow core leaves a NIC's down link out of
/// its paths only where this holds (sim/flow/nic_mirrors.hpp).
[[nodiscard]] bool bundles_are_cycles(Algorithm requested);
/// Whether a collective under `requested` may run on node sub-communicators (hierarchical; auto, which
/// may pick it): the emulation splits them for those only.
[[nodiscard]] bool may_split_by_node(Algorithm requested);

// ---- ring ----

// ring_wire_bytes(kind, p, S): bytes each member sends, 2(p-1)/p S for all-reduce, (p-1)/p S for
// all-gather and reduce-scatter; ring_steps(kind, p): 2(p-1) and p-1. The plan's own formulas
// (sim/schedule/plan.hpp), named here so that every algorithm's closed forms sit side by side.
using schedule::ring_steps;
using schedule::ring_wire_bytes;

// ---- tree (all-reduce only; algorithms/tree.cpp) ----

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

// ---- hierarchical (`nodes` nodes of `per_node` = L members each; algorithms/hierarchical.cpp) ----

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

/// 3 for all-reduce (RS intra, AR inter, AG intra), 2 for all-gather (AG inter, AG intra),
/// reduce-scatter (RS intra, RS inter) and all-to-all (intra, then inter: not rings, see below).
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
/// The hierarchical all-to-all: member (node i, local j) first sends each node-mate (i, t) what it has
/// for local index t on every node, then sends each other node b what node i holds for (b, j). Bytes a
/// member sends under uniform shares: (L-1)/L S inside the node plus (nodes-1)/nodes S across nodes
/// (direct sends (p-L)/p S across nodes too, and (L-1)/p S inside), in 2 steps of one latency each.
[[nodiscard]] double hierarchical_all_to_all_wire_bytes(std::uint32_t nodes, std::uint32_t per_node, double S);

// ---- direct (algorithms/direct.cpp) ----

/// 2 for all-reduce (a direct reduce-scatter, then a direct all-gather), 1 for all-gather,
/// reduce-scatter and all-to-all.
[[nodiscard]] std::uint32_t direct_stage_count(CollKind kind);
/// Bytes each member sends: S/p to each of the p-1 others per stage, (p-1)/p S a stage: the ring's.
[[nodiscard]] double direct_wire_bytes(CollKind kind, std::uint32_t p, double S);
/// 1 a stage (p > 1): every pair's transfer is posted at once, as NCCL's grouped send/recv does.
[[nodiscard]] std::uint32_t direct_steps(CollKind kind, std::uint32_t p);

}  // namespace exasim::collectives
