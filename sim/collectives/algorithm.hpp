#pragma once
// Collective algorithms, as data: which one a scenario asks for, and the closed forms (wire bytes a
// member sends, sequential steps that each pay a latency) that tests and reports check the routed
// collectives against. No topology here: router.hpp turns a ready collective into routed flows.
//
// The algorithms (docs/collectives.md):
//  - ring: the members in group order form a ring; all-reduce = reduce-scatter + all-gather, each p-1
//    steps of S/p bytes (NCCL/RCCL's default for large messages);
//  - tree: NCCL's double binary tree, all-reduce only (NCCL runs all-gather and reduce-scatter as rings,
//    and so does exasim under `tree`): two binary trees, each carrying half the buffer, reduce up and
//    broadcast down pipelined;
//  - hierarchical: intra-node reduce-scatter, inter-node all-reduce among the members of equal local
//    index (one per node), intra-node all-gather (all-gather / reduce-scatter: the matching two phases);
//  - auto: chosen per collective from its size and group shape (resolve_algorithm, router.hpp).
//
// LIMITATIONS: no PAT, CollNet/SHARP or NVLS algorithms; rings follow the group's rank order.

#include "sim/schedule/plan.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace exasim::collectives {

enum class Algorithm : std::uint8_t { Ring, Tree, Hierarchical, Auto };

[[nodiscard]] std::string_view to_string(Algorithm algorithm);
/// "ring", "tree", "hierarchical" or "auto"; nullopt for anything else.
[[nodiscard]] std::optional<Algorithm> parse_algorithm(std::string_view name);
/// The names parse_algorithm accepts, for error messages: "ring|tree|hierarchical|auto".
[[nodiscard]] std::string_view algorithm_choices();

}  // namespace exasim::collectives
