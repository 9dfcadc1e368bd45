#pragma once
// The one entry point that turns a machine file's "network" object into a Topology.
//
// Every bad field is an InputError naming the file, the dotted field ("network.groups") and what is
// allowed; nothing here asserts on input. Keys, by "topology":
//
//  common (every kind)   topology        "single_switch" | "dragonfly" | "dragonfly2d" | "fat_tree"
//                        switch_latency_s  per switch crossed, default 0
//                        routing         see each kind; default "minimal"
//                        sources         free-form object, ignored (where each number comes from)
//
//  single_switch         max_nodes       0 (default): unbounded, sized to nodes_needed (1 node when 0)
//                        routing         "minimal" only
//    Built with nodes_needed nodes (max_nodes when nodes_needed is 0), not the whole machine.
//
//  dragonfly (Slingshot 1D; the whole machine is built, placement picks the nodes a job uses)
//                        groups, switches_per_group, endpoints_per_switch, global_links_per_group_pair
//                        nodes_per_group     optional; default and maximum: what the NIC rule fits
//                                            (switches_per_group / nics * endpoints_per_switch)
//                        ports_per_switch    optional, default 64 (Rosetta, docs/sources.md
//                                            2.4); endpoints + (switches_per_group - 1) local + the most
//                                            global ports on one switch must fit
//                        local_bandwidth_Bps, local_latency_s, global_bandwidth_Bps, global_latency_s
//                        routing             "minimal" | "valiant" | "adaptive"
//                        adaptive_bias       optional, default 1 (flow-hops towards minimal, dragonfly.hpp)
//                        adaptive_candidates optional, 1-16, default 4: minimal and non-minimal paths
//                                            adaptive routing compares per flow (dragonfly.hpp)
//                        adaptive_parts      optional, 1-16, default 1: adaptive routing decides per part of
//                                            a flow (dragonfly.hpp)
//
//  dragonfly2d (Cray Cascade/Aries: a group is a rows x columns grid of switches, all-to-all along each
//  row and each column)
//                        groups, rows, columns, endpoints_per_switch, global_links_per_group_pair
//                        nodes_per_group, routing, adaptive_bias, adaptive_candidates, adaptive_parts: as for dragonfly
//                        ports_per_switch    optional, default 48 (Aries: 48 tiles; not in our reference
//                                            notes, unconfirmed); endpoints + (columns - 1) + (rows - 1)
//                                            + global ports must fit
//                        row_bandwidth_Bps, row_latency_s          links along a row (Cascade: green)
//                        column_bandwidth_Bps, column_latency_s    links along a column (Cascade: black;
//                                            one link per pair, give it the bandwidth of all parallel
//                                            cables)
//                        global_bandwidth_Bps, global_latency_s
//
//  fat_tree (fat_tree.hpp; the whole machine is built)
//                        levels              2 (default) or 3
//                        2 levels: leaves, spines
//                        3 levels: pods, leaves_per_pod, spines_per_pod, cores_per_plane,
//                                  spine_uplinks_per_core (optional, default 1),
//                                  spine_core_bandwidth_Bps, spine_core_latency_s
//                        endpoints_per_leaf  NIC ports per leaf (at least one node's NICs)
//                        leaf_uplinks_per_spine  optional, default 1 (parallel leaf-spine links)
//                        leaf_spine_bandwidth_Bps, leaf_spine_latency_s
//                        nodes               optional; default and maximum: every leaf full
//                        ports_per_switch    optional, default 64
//                        routing             "minimal" (ECMP) | "adaptive" (least-loaded up-link)
//                        rail_optimized      optional, default false: NIC k of every node on rail k's
//                                            leaf (DGX SuperPOD); leaves (leaves_per_pod) a multiple of
//                                            the node's NICs, endpoints_per_leaf = nodes per scalable
//                                            unit (one port per node on each of its rail leaves)
//    The taper follows from the counts: e.g. 32 endpoints and 16 spines per leaf at equal link speed
//    is 2:1.
//
// LIMITATIONS: the models' own (single_switch.hpp, dragonfly.hpp, fat_tree.hpp).

#include <cstdint>
#include <memory>

#include "topologies/node.hpp"
#include "topologies/topology.hpp"

namespace exasim {
class JsonView;
}

namespace exasim::topo {

struct NetworkOptions {
  std::uint32_t nodes_needed = 0;  ///< 0: the whole machine
  std::uint64_t seed = 0;          ///< mixed into every routing choice
};

/// Builds the network a machine file describes; InputError on any bad or inconsistent field, and when
/// the machine has fewer than options.nodes_needed nodes.
[[nodiscard]] std::unique_ptr<Topology> build_network(const NodeSpec& node, const JsonView& network,
                                                      const NetworkOptions& options);

}  // namespace exasim::topo
