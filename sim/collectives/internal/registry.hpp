#pragma once
// The table of collective algorithms (algorithm.hpp lists them): what each algorithm's file,
// sim/collectives/algorithms/<name>.cpp, registers, and entry(), which the router, the cost model and
// the public queries of algorithm.hpp and router.hpp dispatch through. Internal to sim/collectives.
//
// An entry is plain data and function pointers: a stage is routed through one indirect call, as the
// switch it replaces cost. A pointer is null where the algorithm has no such part: auto has no stages
// (it resolves to another algorithm first), only auto's candidates have an estimate.
//
// LIMITATIONS: tune's analytic stage sees a dimension only through its routed ring (one bandwidth, one
// step latency), so algorithms other than nccl and direct register the ring's analytic cost.

#include "sim/collectives/algorithm.hpp"
#include "sim/collectives/internal/cost_model.hpp"
#include "sim/collectives/router.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace exasim::collectives::detail {

/// A closed form: bytes the busiest member sends and the sequential steps, summed over the stages.
struct ClosedForm {
  double wire_bytes = 0;
  std::uint32_t steps = 0;
};

struct AlgorithmEntry {
  std::string_view name;  ///< what `collectives.algorithm` says; written here only
  /// The algorithm `call` runs when this one is requested: itself, or another (ring) where it does not
  /// apply. Never Auto.
  Algorithm (*resolve)(const topo::Topology& topology, const GroupCall& call) = nullptr;
  /// For auto's candidates: whether it can run the collective, and its alpha-beta estimate there
  /// (cost_model.hpp). Null: auto never picks it.
  bool (*applies)(CollKind kind, const CostInputs& in) = nullptr;
  double (*estimate_s)(CollKind kind, const CostInputs& in, double S) = nullptr;
  /// Its closed form over a group of `in`'s shape (p, nodes, per_node); null where a choice decides
  /// (auto, nccl).
  ClosedForm (*closed_form)(CollKind kind, const CostInputs& in, double S) = nullptr;
  /// What tune's analytic stage charges a collective on a dimension of p members (router.hpp).
  AnalyticCost (*analytic_cost)(CollKind kind, std::uint32_t p, double S, const AnalyticLink& link) = nullptr;
  /// Stages of a collective it runs (resolved to itself), and the routing of one of them into `out`
  /// (cleared by the caller); null for auto.
  std::uint32_t (*stage_count)(const GroupCall& call) = nullptr;
  void (*route_stage)(const topo::Topology& topology, const GroupCall& call, std::uint32_t stage,
                      const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) = nullptr;
  bool joins_any_members = false;           ///< algorithm.hpp's joins_any_members
  bool bundles_are_cycles = true;           ///< algorithm.hpp's bundles_are_cycles
  bool may_split_by_node = false;           ///< algorithm.hpp's may_split_by_node
  Algorithm emulated_by = Algorithm::Ring;  ///< algorithm.hpp's emulated_by
  /// The ring a stage runs on (router.hpp's stage_ring); null: none of the group's, so the rows of any
  /// group size for the collective's kind and buffer.
  StageRing (*stage_ring)(const topo::Topology& topology, const GroupCall& call, std::uint32_t stage) = nullptr;
};

/// The entry of `algorithm`.
[[nodiscard]] const AlgorithmEntry& entry(Algorithm algorithm);

// Each algorithm's file defines its entry as <name>_algorithm().
#define EXASIM_DECLARE_ALGORITHM_ENTRY(enumerator, name) const AlgorithmEntry& name##_algorithm();
EXASIM_COLLECTIVE_ALGORITHMS(EXASIM_DECLARE_ALGORITHM_ENTRY)
#undef EXASIM_DECLARE_ALGORITHM_ENTRY

// What several entries share.

/// The slower of the two sampled hops' latencies.
[[nodiscard]] inline double max_latency(const CostInputs& in) {
  return std::max(in.intra.latency_s, in.inter.latency_s);
}
/// The ring's analytic cost: its wire bytes through the ring's bandwidth, its steps at the step latency.
[[nodiscard]] AnalyticCost ring_analytic_cost(CollKind kind, std::uint32_t p, double S, const AnalyticLink& link);
/// Member `k` of the group whose member is rank 0, or -1.
[[nodiscard]] std::int64_t rank0_member(const GroupCall& call);
/// Stage `stage` (0: inside nodes, 1: between them) of a hierarchical all-to-all
/// (algorithms/hierarchical_all_to_all.cpp); the hierarchical entry hands all-to-alls here.
void route_hierarchical_all_to_all(const topo::Topology& topology, const GroupCall& call, std::uint32_t stage,
                                   const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out);

}  // namespace exasim::collectives::detail
