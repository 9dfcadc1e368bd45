// tree: NCCL's double binary tree, all-reduce only (algorithm.hpp, docs/collectives.md section 4).
#include "sim/collectives/double_binary_tree.hpp"
#include "sim/collectives/internal/registry.hpp"
#include "sim/collectives/internal/route_support.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::collectives {

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

namespace detail {

namespace {

double estimate_s(CollKind /*kind*/, const CostInputs& in, double S) {
  const double shared_inter_Bps = in.inter.bandwidth_Bps / in.nic_share;
  return tree_steps(in.p) * (max_latency(in) + in.step_overhead_s) +
         tree_max_wire_bytes(in.p, S) / std::min(in.intra.bandwidth_Bps, shared_inter_Bps);
}

/// Per tree, one bundle of every edge up (reduce) then every edge down (broadcast), S/2 per hop.
void route(const topo::Topology& topology, const GroupCall& call, std::uint32_t /*stage*/,
           const topo::LinkLoadView* load, const OnHop& on_hop, StageRoute& out) {
  if (call.kind != CollKind::AllReduce) throw std::logic_error("route_stage: tree runs all-reduce only");
  const std::uint32_t p = call.size();
  const std::uint64_t key = call_key(call);
  double hop_latency_s = 0;
  std::uint32_t index = 0;
  auto hop = [&](std::uint32_t from, std::int64_t to) {
    const std::uint32_t position = hop_position(PositionTag::Tree, 0, index++);
    hop_latency_s =
        std::max(hop_latency_s, route_hop(topology, call, key, call.member(from),
                                          call.member(static_cast<std::uint32_t>(to)), position, load, on_hop, out));
  };
  for (int tree = 0; tree < 2; ++tree) {
    const std::size_t begin = out.links.size();
    for (std::uint32_t r = 0; r < p; ++r) {
      const auto parent = double_binary_tree_links(p, r, tree).parent;
      if (parent != kNoMember) hop(r, parent);
    }
    for (std::uint32_t r = 0; r < p; ++r) {
      const auto parent = double_binary_tree_links(p, r, tree).parent;
      if (parent != kNoMember) hop(static_cast<std::uint32_t>(parent), r);
    }
    end_bundle(out, begin, call.bytes / 2);
  }
  out.latency_s = tree_steps(p) * (hop_latency_s + call.step_overhead_s);
  if (const auto m = rank0_member(call); m >= 0)
    out.rank0_wire_bytes = tree_wire_bytes(p, static_cast<std::uint32_t>(m), call.bytes);
}

}  // namespace

const AlgorithmEntry& tree_algorithm() {
  static const AlgorithmEntry entry{"tree",
                                    [](const topo::Topology&, const GroupCall& call) {
                                      return tree_applies(call.kind, call.size()) ? Algorithm::Tree : Algorithm::Ring;
                                    },
                                    [](CollKind kind, const CostInputs& in) { return tree_applies(kind, in.p); },
                                    estimate_s,
                                    [](CollKind, const CostInputs& in, double S) {
                                      return ClosedForm{tree_max_wire_bytes(in.p, S), tree_steps(in.p)};
                                    },
                                    ring_analytic_cost,
                                    [](const GroupCall&) { return 1u; },
                                    route,
                                    /*joins_any_members=*/true,
                                    /*bundles_are_cycles=*/true,
                                    /*may_split_by_node=*/false,
                                    /*emulated_by=*/Algorithm::Tree,
                                    /*stage_ring=*/nullptr};
  return entry;
}

}  // namespace detail

}  // namespace exasim::collectives
