#pragma once
// Dragonflies: Slingshot's 1D dragonfly (Frontier, Perlmutter, Alps) and Cray Cascade/Aries' 2D one.
// Groups of switches wired densely inside, groups wired all-to-all by global links, nodes' NICs on the
// switches' endpoint ports.
//
// A group is a rows x columns grid of switches (columns = switches_per_group / rows). Switches of the
// same row are wired all-to-all (class Local), and so are switches of the same column (LocalColumn).
// rows = 1 is Slingshot's 1D dragonfly: one row, every switch linked to every other (Rosetta L1).
// rows > 1 is Cascade: an XC group is 6 chassis (rows) x 16 Aries blades (columns), green links in a
// chassis, black links across chassis (Cray XC network paper, Alverson et al. 2012; not in
// docs/sources.md, so unconfirmed here).
//
// Wiring rules (fixed, so that link ids and routes are pure arithmetic and no route table is needed):
//  - switch ids: switch s of group g is g * switches_per_group + s; s = row * columns + column.
//  - link ids: node links first (node_links.hpp), then per switch its row links (towards columns in
//    increasing order, skipping its own) and column links (rows in increasing order), then global links.
//  - global links: each unordered group pair gets exactly global_links_per_group_pair physical links.
//    Group g numbers its peer groups h != g in increasing order (rank r = h < g ? h : h - 1) and its
//    global ports i = r * L + k (k = 0..L-1, the k-th parallel link towards h); port i sits on switch
//    i % switches_per_group. Consecutive ports go to consecutive switches, so the L parallel links
//    towards one group leave from L different switches and every switch carries
//    ceil((groups - 1) * L / switches_per_group) or one fewer global ports (Frontier: 9 or 10 of 16).
//  - NICs (best estimate, unconfirmed for every machine: docs/sources.md 2.1): a group's
//    switches form sets of `nics` consecutive switches, like the switch blades of one EX chassis.
//    Local node j of a group uses set j / endpoints_per_switch and port j % endpoints_per_switch;
//    its NIC k lands on switch (j / endpoints_per_switch) * nics + k of that set. So a node's NICs are
//    on different switches, and the endpoints_per_switch consecutive nodes of a set share the same
//    switches (Frontier: 16 nodes of a chassis on its 4 switch blades).
//  - nodes are numbered group-major (node = group * nodes_per_group + j); GPU g of a node sends
//    through NIC g * nics / gpus (node.hpp).
//
// Latency: every link that enters a switch (NIC-up, local, global) also carries switch_latency_s, so a
// route pays one switch latency per switch it crosses, as in SingleSwitch.
//
// Routing (route()): inside a node, the GPU link matrix (gpu_links.hpp). Between nodes: NIC-up,
// switch-to-switch hops chosen by the policy, NIC-down. Inside a group, a move between switches in
// different rows and columns goes along the row first, then along the column (dimension order).
//  - Minimal: local-global-local; the parallel global link is picked by hashing flow_key with the
//    seed and the two GPUs. At most 3 switch-to-switch hops (1D), 5 (2D: row, column, global, row,
//    column).
//  - Valiant: through an intermediate group picked by the same hash (global links into and out of it
//    also picked by hash); up to 5 hops (2D: 8). Traffic inside a group goes through an intermediate
//    switch of the group instead (1D: 2 hops; 2D: up to 4), since a detour through another group would
//    cross two global links. Falls back to minimal where no intermediate exists (2 groups; fewer than
//    3 switches per group).
//  - Adaptive (UGAL-like, after Slingshot's per-packet choice between minimal and non-minimal
//    candidates): cost(path) = (1 + highest load on its switch-to-switch links) * hops, where the load
//    is LinkLoadView::load (active flows) and the 1 is the flow being routed. adaptive_candidates = C
//    minimal candidates (the parallel global links picked by C hashes; inside a group the minimal
//    path is unique) and C non-minimal ones (C intermediate groups, or switches inside a group) are
//    costed; candidate 0 of each kind is what Minimal and Valiant routing take. The cheapest minimal
//    one wins when its cost <= the cheapest non-minimal's + adaptive_bias. The bias is in flow-hops
//    and leans towards minimal: with the default 1, a 3-hop minimal path keeps new flows until two
//    others share its busiest link while a 5-hop Valiant candidate is idle (one other flow suffices
//    when the Valiant candidate is as short). Slingshot's real bias is unconfirmed.
//    Why several candidates: a flow of a collective lasts milliseconds to seconds, over which
//    Slingshot's per-packet choices try many ports; one decision per flow between two fixed candidates
//    put whole rings on a loaded detour that a second draw would have avoided. With C = 1 adaptive
//    was 12.6 % slower than Valiant on a 256-GCD Frontier job inside one group (8 layers: minimal
//    1.611 s, Valiant 1.036 s, adaptive 1.167 s); C = 4 gives 1.077 s, C = 8 1.033 s. The size of
//    Slingshot's candidate set is not in our sources (Cray's earlier Aries is reported to compare two
//    minimal and two non-minimal paths per packet, also unconfirmed here); 4 is our estimate.
//    With no load view, Adaptive routes as on an idle network (minimal unless Valiant is shorter).
//    adaptive_parts = P > 1 (route_parts()): the collective router cuts every bundle of a stage into P
//    equal parts and routes them one after another, each part's flow key different (so its Valiant
//    candidate and its parallel global links differ) and each seeing the parts routed before it as
//    load; the loads count parts, so the cost reads (1 + busiest / P) * hops. A flow then spreads over
//    minimal and non-minimal paths in steps of 1/P, as Slingshot's per-packet choices spread its
//    packets, and a small change in the order of launches moves 1/P of a flow rather than all of it.
//
// LIMITATIONS:
//  - one flow (adaptive_parts = 1) or each of its P parts = one path, decided when the flow starts,
//    while Slingshot decides per packet and keeps adapting: a part never moves off a path that became
//    congested later. Parts apply to collectives' bundles, not to point-to-point (pipeline) transfers.
//  - P parts cost up to P paths per bundle: on 4,096 GCDs spread over the groups, P = 4 made the
//    fast core 11-15x slower.
//  - Adaptive compares C minimal and C non-minimal candidates end to end, once per flow (or part);
//    Slingshot weighs candidates per packet and per hop using output queue depth, not flow counts.
//  - one link per direction between two switches of a row or column: Cascade's 3 parallel black links
//    per column pair are one link of 3x the bandwidth (set column_bandwidth_Bps accordingly).
//  - 2D groups route row-then-column only; Aries also uses column-then-row paths.
//  - only compute groups: no storage/service groups, and every group has the same switch count.
//  - all groups are populated the same way; switches left over by the NIC rule carry no endpoints.
//  - no hardware congestion control, traffic classes or link-level retry; switches have infinite
//    internal capacity (crossbar), only their port links are shared.
//  - no PCIe/ESM link between GPU and NIC (see node.hpp): a GPU reaches its NIC for free.
//  - switch_graph_diameter() runs one BFS per switch: fine for `exasim topo`, too slow for hot loops.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/fast_divisor.hpp"
#include "topologies/gpu_links.hpp"
#include "topologies/node.hpp"
#include "topologies/node_links.hpp"
#include "topologies/routing.hpp"
#include "topologies/topology.hpp"

namespace exasim::topo {

struct DragonflyParams {
  /// GPUs, NIC count, and the NIC link class: NIC links use node.nic_bandwidth_Bps / node.nic_latency_s
  /// (one place for NIC figures, shared with SingleSwitch and the machine presets).
  NodeSpec node;
  /// Node internals. Empty (gpus == 0): gpu_link_matrix(node). Latency of every GPU-GPU link:
  /// node.gpu_gpu_latency_s.
  GpuLinkMatrix gpu_links;

  std::uint32_t groups = 1;
  std::uint32_t switches_per_group = 1;    ///< a = rows * columns
  std::uint32_t rows = 1;                  ///< 1: Slingshot 1D; > 1: Cascade-style 2D grid
  std::uint32_t endpoints_per_switch = 1;  ///< p: NIC ports per switch
  std::uint32_t global_links_per_group_pair = 1;
  std::uint32_t nodes_per_group = 0;   ///< 0: as many as the NIC rule fits
  std::uint32_t ports_per_switch = 0;  ///< 0: not checked; else endpoints + local + global <= it

  double local_bandwidth_Bps = 0;   ///< per direction, per local (2D: row) link
  double local_latency_s = 0;       ///< wire only; switch latency is added separately
  double column_bandwidth_Bps = 0;  ///< 2D only: per direction, per column link
  double column_latency_s = 0;
  double global_bandwidth_Bps = 0;  ///< per direction, per global link
  double global_latency_s = 0;
  double switch_latency_s = 0;  ///< per switch crossed

  RoutingPolicy routing = RoutingPolicy::Minimal;
  double adaptive_bias = 1.0;  ///< flow-hops in favour of the minimal path (see above)
  static constexpr std::uint32_t kMaxAdaptiveCandidates = 16;
  std::uint32_t adaptive_candidates = 4;  ///< minimal and non-minimal candidates compared under Adaptive
  static constexpr std::uint32_t kMaxAdaptiveParts = 16;
  std::uint32_t adaptive_parts = 1;  ///< parts of a flow routed one by one under Adaptive (see above)
  std::uint64_t seed = 0;            ///< mixed into every path choice
};

namespace detail {
struct SwitchGraph;  // Boost.Graph adjacency list, defined in dragonfly.cpp only
}

class Dragonfly final : public Topology {
 public:
  /// Throws std::invalid_argument on inconsistent parameters.
  explicit Dragonfly(const DragonflyParams& params);

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::uint32_t gpu_count() const override { return node_count() * p_.node.gpus; }
  [[nodiscard]] std::uint32_t gpus_per_node() const override { return p_.node.gpus; }
  [[nodiscard]] LinkId first_load_read_link() const override {
    return p_.routing == RoutingPolicy::Adaptive ? node_count() * node_links_.per_node()
                                                 : static_cast<LinkId>(links().size());
  }
  [[nodiscard]] std::uint32_t route_parts() const override {
    return p_.routing == RoutingPolicy::Adaptive ? p_.adaptive_parts : 1;
  }
  [[nodiscard]] std::uint32_t nics_per_node() const override { return p_.node.nics; }
  [[nodiscard]] std::uint32_t links_per_node() const override { return node_links_.per_node(); }
  [[nodiscard]] std::uint32_t switch_count() const override { return p_.groups * p_.switches_per_group; }
  [[nodiscard]] std::uint32_t node_switch_count() const override { return node_links_.switched() ? node_count() : 0; }
  [[nodiscard]] std::uint32_t group_count() const override { return p_.groups; }
  [[nodiscard]] std::uint32_t group_of_node(std::uint32_t node) const override { return node / nodes_per_group_; }
  [[nodiscard]] LinkEnds link_ends(LinkId link) const override;
  void route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
             std::vector<LinkId>& out) const override;
  double route_with_latency(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
                            std::vector<LinkId>& out) const override;
  [[nodiscard]] TopologySummary summary() const override;

  [[nodiscard]] const DragonflyParams& params() const { return p_; }
  [[nodiscard]] bool two_dimensional() const { return p_.rows > 1; }
  [[nodiscard]] std::uint32_t columns() const { return p_.switches_per_group / p_.rows; }
  [[nodiscard]] std::uint32_t nodes_per_group() const { return nodes_per_group_; }
  [[nodiscard]] std::uint32_t node_count() const { return p_.groups * nodes_per_group_; }
  [[nodiscard]] std::uint32_t group_of_switch(std::uint32_t sw) const override { return per_group_.div(sw); }
  [[nodiscard]] std::uint32_t switch_of_nic(std::uint32_t node, std::uint32_t nic) const;
  [[nodiscard]] std::uint32_t switch_of_gpu(GpuId gpu) const;

  // Link ids, by the layout rules above.
  [[nodiscard]] LinkId gpu_link(std::uint32_t node, std::uint32_t from, std::uint32_t to) const {
    return node_links_.gpu_link(node, from, to);
  }
  [[nodiscard]] LinkId nic_link(std::uint32_t node, std::uint32_t nic, bool up) const {
    return node_links_.nic_link(node, nic, up);
  }
  /// A row (Local) or column (LocalColumn) link; throws std::invalid_argument when the two switches
  /// share neither.
  [[nodiscard]] LinkId local_link(std::uint32_t from_switch, std::uint32_t to_switch) const;
  [[nodiscard]] LinkId global_link(std::uint32_t from_group, std::uint32_t to_group, std::uint32_t k) const;
  /// The switch of `from_group` where its k-th global link towards `to_group` starts.
  [[nodiscard]] std::uint32_t global_link_switch(std::uint32_t from_group, std::uint32_t to_group,
                                                 std::uint32_t k) const;
  /// (from switch, to switch) of a local or global link; throws std::invalid_argument for other links.
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> switch_link_ends(LinkId link) const;

  // Summary, for `exasim topo`.
  [[nodiscard]] std::size_t link_count(LinkClass cls) const;
  /// Directed global links from group g to group h, counted on the switch graph (equals the physical
  /// link count of the pair).
  [[nodiscard]] std::uint32_t global_links_between(std::uint32_t g, std::uint32_t h) const;
  [[nodiscard]] std::uint32_t max_global_ports_per_switch() const;
  /// Ports a switch needs at most: endpoints + local + global.
  [[nodiscard]] std::uint32_t max_ports_used_per_switch() const;
  /// Longest Minimal route in switch-to-switch hops, over all switch pairs and parallel links.
  [[nodiscard]] std::uint32_t longest_minimal_route_hops() const;
  /// Shortest-path diameter of the switch graph (BFS from every switch; see LIMITATIONS).
  [[nodiscard]] std::uint32_t switch_graph_diameter() const;
  /// Per direction, across a cut of the groups into two halves (floor/ceil of groups / 2).
  [[nodiscard]] double global_bisection_bandwidth_Bps() const;
  /// Per direction, all global links leaving one group.
  [[nodiscard]] double global_bandwidth_per_group_Bps() const;
  /// Per direction, all NICs of one group's nodes.
  [[nodiscard]] double injection_bandwidth_per_group_Bps() const;
  /// global / injection bandwidth per group (Frontier: 292 / 512 = 0.57, i.e. blocking factor 1.75).
  [[nodiscard]] double taper() const;

 private:
  struct SwitchPath;
  /// A switch as its group and its index in the group: routes are built hop by hop in these terms,
  /// from the tables below, without a division (adaptive routing builds up to eight candidate paths
  /// for every hop of every collective).
  struct Cursor {
    std::uint32_t group;
    std::uint32_t index;
  };
  /// A switch's place in its group's grid (row 0 throughout a 1D group).
  struct GridPlace {
    std::uint32_t row;
    std::uint32_t column;
  };

  /// From per_column_ (set first in the constructor): columns() divides. row_link() and
  /// column_link() read its copy, local_per_switch_.
  [[nodiscard]] std::uint32_t local_links_per_switch() const { return per_column_.divisor() - 1 + p_.rows - 1; }
  /// The link from switch sw (column from_col) along its row to column to_col (!= from_col).
  [[nodiscard]] LinkId row_link(std::uint32_t sw, std::uint32_t from_col, std::uint32_t to_col) const;
  /// The link from switch sw (row from_row) along its column to row to_row (!= from_row).
  [[nodiscard]] LinkId column_link(std::uint32_t sw, std::uint32_t from_row, std::uint32_t to_row) const;
  [[nodiscard]] Cursor cursor(std::uint32_t sw) const { return {per_group_.div(sw), per_group_.mod(sw)}; }
  [[nodiscard]] SwitchPath minimal_path(Cursor s, Cursor t, std::uint64_t hash) const;
  /// False when no intermediate group/switch exists; `path` is then untouched.
  [[nodiscard]] bool valiant_path(Cursor s, Cursor t, std::uint64_t hash, SwitchPath& path) const;
  /// route() and route_with_latency(): with `latency`, also the route's latency_s().
  void route_to(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load, std::vector<LinkId>& out,
                double* latency) const;
  /// A switch-to-switch link's latency from its id (the wiring rules), not from the per-link table.
  [[nodiscard]] double switch_link_latency_s(LinkId link) const;
  /// Whether adaptive routing may take the minimal path between switches s and t of one group without
  /// comparing candidates: it is idle (see route()).
  [[nodiscard]] bool idle_inside_group(Cursor s, Cursor t, const SwitchPath& path, const LinkLoadView* load) const;
  /// Moves `at` to switch `to_index` of its group (row first, then column), adding the links taken.
  void step_local(Cursor& at, std::uint32_t to_index, SwitchPath& path) const;
  /// Moves `at` over its group's k-th global link towards `to_group`, adding the links taken.
  void step_global(Cursor& at, std::uint32_t to_group, std::uint32_t k, SwitchPath& path) const;

  DragonflyParams p_;
  FastDivisor per_group_;       ///< by switches_per_group
  FastDivisor per_column_;      ///< by columns()
  FastDivisor per_pair_;        ///< by global_links_per_group_pair: hashes pick parallel links
  FastDivisor other_groups_;    ///< by groups - 2 (at least 1): hashes pick Valiant's intermediate group
  FastDivisor other_switches_;  ///< by switches_per_group - 2 (at least 1): ... or switch inside a group
  NodeLinks node_links_;
  std::uint32_t nodes_per_group_ = 0;
  LinkId local_base_ = 0;
  LinkId global_base_ = 0;
  std::uint32_t local_per_switch_ = 0;  ///< local_links_per_switch()
  std::uint64_t mixed_seed_ = 0;        ///< mix(p_.seed), for flow_hash_of_mixed_seed()
  /// By index in a group: the switch's row and column.
  std::vector<GridPlace> grid_;
  /// By global port i = peer rank * global_links_per_group_pair + k: the index of its switch in the group.
  std::vector<std::uint32_t> port_switch_;
  /// By GPU: where its flows enter and leave the network (its NIC's links and switch). route() reads
  /// two of these instead of dividing its way there (ten divisions a route: node, NIC, group, switch).
  struct GpuPort {
    Cursor sw;
    LinkId up;
    LinkId down;
  };
  std::vector<GpuPort> gpu_ports_;
  /// The latencies of the links routes cross, by kind (every NIC-up link has the same, and so on; the
  /// constructor checks each link against them): route_with_latency() adds these up rather than look
  /// each link up in Topology's table, a cache miss a link on large machines (3 % of a spread run).
  double nic_up_latency_s_ = 0, nic_down_latency_s_ = 0, row_latency_s_ = 0, column_latency_s_ = 0,
         global_latency_s_ = 0;
  std::shared_ptr<const detail::SwitchGraph> graph_;  ///< shared: immutable, keeps Dragonfly copyable
};

}  // namespace exasim::topo
