// nccl: what NCCL (RCCL) would run, chosen by nccl_tuner.hpp and routed here as channels over the NIC
// rails (internal/nccl_route.hpp says how; docs/collectives.md section 7).
#include "sim/collectives/double_binary_tree.hpp"
#include "sim/collectives/group_layout.hpp"
#include "sim/collectives/internal/cost_model.hpp"
#include "sim/collectives/internal/nccl_route.hpp"
#include "sim/collectives/internal/registry.hpp"
#include "sim/collectives/internal/route_support.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace exasim::collectives {

namespace {

using detail::call_key;
using detail::end_bundle;
using detail::route_hop;

TunerInputs inputs_of(const topo::Topology& topology, const GroupCall& call, const GroupLayout& layout) {
  TunerInputs in;
  in.kind = call.kind;
  in.bytes = call.bytes;
  in.n = layout.p;
  in.nodes = std::max(1u, layout.nodes);
  if (layout.p < 2) return in;
  auto gpu_of = [&](std::uint32_t i) { return call.gpu(call.member(layout.by_node[i])); };
  const std::uint32_t on_first = first_node_members(topology, call, layout);
  if (on_first > 1) {
    // The slowest hop between consecutive members of the first node, as a ring inside it runs them.
    double slowest = std::numeric_limits<double>::infinity();
    for (std::uint32_t j = 0; j < on_first; ++j)
      slowest = std::min(slowest, sample_hop(topology, gpu_of(j), gpu_of((j + 1) % on_first)).bandwidth_Bps);
    in.intra_Bps = slowest;
  }
  if (on_first < layout.p) {
    in.nic_Bps = sample_hop(topology, gpu_of(0), gpu_of(on_first)).bandwidth_Bps;
    in.rails = std::max(1u, first_node_rails(topology, call, layout, on_first));
  }
  return in;
}

/// Member index (into the group) of the c-th channel's k-th member of node i, for L members per node
/// and `channels` channels.
std::uint32_t channel_member(const GroupLayout& layout, std::uint32_t L, std::uint32_t channels, std::uint32_t c,
                             std::uint32_t i, std::uint32_t j) {
  return layout.by_node[i * L + (j + c * (L / channels)) % L];
}

}  // namespace

TunerInputs nccl_inputs(const topo::Topology& topology, const GroupCall& call) {
  return inputs_of(topology, call, group_layout(topology, call));
}

void route_nccl(const topo::Topology& topology, const GroupCall& call, const topo::LinkLoadView* load,
                const OnHop& on_hop, StageRoute& out) {
  if (call.nccl == nullptr) throw std::logic_error("route_stage: nccl needs the job's library profile");
  const GroupLayout layout = group_layout(topology, call);
  const std::uint32_t p = layout.p;
  if (p < 2) return;
  const TunerInputs in = inputs_of(topology, call, layout);
  const NcclCost choice = nccl_choose(*call.nccl, in);
  // The bus bandwidth the routed flows give unloaded over the one the tuner costs the choice at.
  const double inflation = nccl_simple_bus_Bps(in, 1, 1) / choice.bus_Bps;
  const std::uint64_t key = call_key(call);
  // Channels over rails where every node holds L > 1 members sending through several NICs.
  const std::uint32_t L = layout.per_node;
  const std::uint32_t channels = layout.nodes > 1 && L > 1 && in.rails > 1 ? std::min(in.rails, L) : 1;
  std::uint32_t index = 0;
  auto hop = [&](std::uint32_t from, std::uint32_t to) {
    route_hop(topology, call, key, call.member(from), call.member(to), hop_position(PositionTag::Nccl, 0, index++),
              load, on_hop, out);
  };
  if (choice.algo == NcclAlgo::Nvls) {
    // Every member sends its buffer up to the switch and gets the sum multicast back: one hop out of
    // and one into every GPU, as a ring's hops over the node are, each carrying S x the physical over
    // the tuner's bus bandwidth x 2(n-1)/n (the busBw convention of the time).
    const double bytes = call.bytes * ring_wire_bytes(call.kind, p, 1.0) * inflation;
    const std::size_t begin = out.links.size();
    for (std::uint32_t j = 0; j < p; ++j) hop(layout.by_node[j], layout.by_node[(j + 1) % p]);
    end_bundle(out, begin, bytes);
  } else if (choice.algo == NcclAlgo::Ring) {
    const double bytes = ring_wire_bytes(call.kind, p, call.bytes) / channels * inflation;
    if (channels == 1) {  // one ring over every member, node-major
      const std::size_t begin = out.links.size();
      for (std::uint32_t j = 0; j < p; ++j) hop(layout.by_node[j], layout.by_node[(j + 1) % p]);
      end_bundle(out, begin, bytes);
    }
    for (std::uint32_t c = 0; channels > 1 && c < channels; ++c) {
      // Channel c enters each node at its rail member (rotation c x L / k), visits the others, and
      // leaves through the rail member's NIC: the last member's data crosses NVLink to it first (PXN).
      const std::size_t begin = out.links.size();
      for (std::uint32_t i = 0; i < layout.nodes; ++i) {
        for (std::uint32_t j = 1; j < L; ++j)
          hop(channel_member(layout, L, channels, c, i, j - 1), channel_member(layout, L, channels, c, i, j));
        const std::uint32_t entry = channel_member(layout, L, channels, c, i, 0);
        hop(channel_member(layout, L, channels, c, i, L - 1), entry);
        hop(entry, channel_member(layout, L, channels, c, (i + 1) % layout.nodes, 0));
      }
      end_bundle(out, begin, bytes);
    }
  } else {
    // One member per node and channel: the channel's rail member (its first in rotated order).
    const std::uint32_t N = layout.nodes;
    std::vector<std::uint32_t> rep;
    rep.reserve(N);
    const double bytes = call.bytes / 2 / channels * inflation;
    for (std::uint32_t c = 0; c < channels; ++c) {
      rep.clear();
      if (channels > 1) {
        for (std::uint32_t i = 0; i < N; ++i) rep.push_back(channel_member(layout, L, channels, c, i, 0));
      } else {  // one channel: each node's first member (nodes may hold different numbers)
        for (std::uint32_t k = 0; k < p; ++k)
          if (k == 0 || topology.node_of(call.gpu(call.member(layout.by_node[k]))) !=
                            topology.node_of(call.gpu(call.member(layout.by_node[k - 1]))))
            rep.push_back(layout.by_node[k]);
      }
      for (int tree = 0; tree < 2; ++tree) {
        const std::size_t begin = out.links.size();
        for (std::uint32_t r = 0; r < N; ++r)
          if (const auto parent = double_binary_tree_links(N, r, tree).parent; parent != kNoMember)
            hop(rep[r], rep[static_cast<std::uint32_t>(parent)]);
        for (std::uint32_t r = 0; r < N; ++r)
          if (const auto parent = double_binary_tree_links(N, r, tree).parent; parent != kNoMember)
            hop(rep[static_cast<std::uint32_t>(parent)], rep[r]);
        end_bundle(out, begin, bytes);
      }
    }
  }
  out.latency_s = choice.latency_s + nccl_pipeline_s(*call.nccl, choice, in);
  if (layout.rank0_member >= 0) out.rank0_wire_bytes = ring_wire_bytes(call.kind, p, call.bytes);
}

namespace detail {

namespace {

/// The tuner's choice for this collective: its bandwidth time, its latency plus pipeline fill. Without
/// the library's inputs (a dimension tune did not prepare for nccl), the ring's.
AnalyticCost analytic_cost(CollKind kind, std::uint32_t p, double S, const AnalyticLink& link) {
  if (link.nccl == nullptr || link.nccl_inputs == nullptr) return ring_analytic_cost(kind, p, S, link);
  TunerInputs in = *link.nccl_inputs;
  in.kind = kind;
  in.bytes = S;
  const auto choice = nccl_choose(*link.nccl, in);
  return {S / choice.algorithm_Bps, choice.latency_s + nccl_pipeline_s(*link.nccl, choice, in)};
}

}  // namespace

const AlgorithmEntry& nccl_algorithm() {
  static const AlgorithmEntry entry{
      "nccl",
      [](const topo::Topology&, const GroupCall& call) {
        return schedule::is_p2p(call.kind) || call.size() < 2 ? Algorithm::Ring : Algorithm::Nccl;
      },
      /*applies=*/nullptr,
      /*estimate_s=*/nullptr,
      /*closed_form=*/nullptr, analytic_cost, [](const GroupCall&) { return 1u; },
      [](const topo::Topology& topology, const GroupCall& call, std::uint32_t, const topo::LinkLoadView* load,
         const OnHop& on_hop, StageRoute& out) { route_nccl(topology, call, load, on_hop, out); },
      /*joins_any_members=*/true,
      /*bundles_are_cycles=*/true,
      /*may_split_by_node=*/false,
      // The MPI host has no GPU library to model: the emulation runs the ring.
      /*emulated_by=*/Algorithm::Ring,
      /*stage_ring=*/nullptr};
  return entry;
}

}  // namespace detail

}  // namespace exasim::collectives
