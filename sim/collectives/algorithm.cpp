#include "sim/collectives/algorithm.hpp"

#include "sim/collectives/double_binary_tree.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exasim::collectives {

std::string_view to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::Auto: return "auto";
    case Algorithm::Nccl: return "nccl";
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Auto, Algorithm::Nccl})
    if (name == to_string(a)) return a;
  return std::nullopt;
}

double tree_wire_bytes(std::uint32_t p, std::uint32_t member, double S) {
  if (p <= 1) return 0;
  int edges = 0;
  for (int tree = 0; tree < 2; ++tree) {
    const TreeLinks links = double_binary_tree_links(p, member, tree);
    edges += links.parent != kNoMember;
    for (auto child : links.children) edges += child != kNoMember;
  }
  return edges * S / 2;
}

double tree_max_wire_bytes(std::uint32_t p, double S) {
  double most = 0;
  for (std::uint32_t r = 0; r < p; ++r) most = std::max(most, tree_wire_bytes(p, r, S));
  return most;
}

std::uint32_t tree_steps(std::uint32_t p) { return 2 * binary_tree_depth(p); }

std::uint32_t hierarchical_stage_count(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce: return 3;
    case CollKind::AllGather:
    case CollKind::ReduceScatter: return 2;
    default: throw std::logic_error("hierarchical: no stages for " + std::string(schedule::to_string(kind)));
  }
}

HierarchicalStage hierarchical_stage(CollKind kind, std::uint32_t nodes, std::uint32_t per_node, double S,
                                     std::uint32_t stage) {
  if (stage >= hierarchical_stage_count(kind))
    throw std::logic_error("hierarchical " + std::string(schedule::to_string(kind)) + ": no stage " +
                           std::to_string(stage));
  const HierarchicalStage intra_rs{false, CollKind::ReduceScatter, per_node, S};
  const HierarchicalStage intra_ag{false, CollKind::AllGather, per_node, S};
  const double slice = per_node == 0 ? 0 : S / per_node;  // what each local index owns after intra RS
  switch (kind) {
    case CollKind::AllReduce:
      return stage == 0 ? intra_rs : stage == 1 ? HierarchicalStage{true, CollKind::AllReduce, nodes, slice} : intra_ag;
    case CollKind::AllGather: return stage == 0 ? HierarchicalStage{true, CollKind::AllGather, nodes, slice} : intra_ag;
    default: return stage == 0 ? intra_rs : HierarchicalStage{true, CollKind::ReduceScatter, nodes, slice};
  }
}

double hierarchical_stage_wire_bytes(const HierarchicalStage& stage) {
  return ring_wire_bytes(stage.kind, stage.ring_size, stage.bytes);
}

std::uint32_t hierarchical_stage_steps(const HierarchicalStage& stage) {
  return ring_steps(stage.kind, stage.ring_size);
}

double hierarchical_wire_bytes(CollKind kind, std::uint32_t nodes, std::uint32_t per_node, double S) {
  double bytes = 0;
  for (std::uint32_t s = 0; s < hierarchical_stage_count(kind); ++s)
    bytes += hierarchical_stage_wire_bytes(hierarchical_stage(kind, nodes, per_node, S, s));
  return bytes;
}

std::uint32_t hierarchical_steps(CollKind kind, std::uint32_t nodes, std::uint32_t per_node) {
  std::uint32_t steps = 0;
  for (std::uint32_t s = 0; s < hierarchical_stage_count(kind); ++s)
    steps += hierarchical_stage_steps(hierarchical_stage(kind, nodes, per_node, 0, s));
  return steps;
}

double all_to_all_wire_bytes(std::uint32_t p, double S) { return p <= 1 ? 0 : static_cast<double>(p - 1) / p * S; }

std::uint32_t all_to_all_steps(std::uint32_t p) { return p > 1 ? 1 : 0; }

}  // namespace exasim::collectives
