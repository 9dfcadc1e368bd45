#pragma once
// Fat trees (folded Clos) of 2 or 3 switch levels, with a taper at each level: the InfiniBand and
// Ethernet clusters most GPU machines outside the Cray world use (e.g. NVIDIA SuperPODs).
//
// Shape:
//  - leaf switches carry the NICs (endpoints_per_leaf ports each);
//  - a pod is leaves_per_pod leaves and spines_per_pod spines; every leaf has
//    leaf_uplinks_per_spine parallel links to every spine of its pod;
//  - 2 levels: one pod is the whole machine (pods = 1);
//  - 3 levels: pods pods and spines_per_pod planes of cores_per_plane core switches; spine j of every
//    pod has spine_uplinks_per_core parallel links to every core of plane j (the k-ary fat-tree wiring).
// The taper of a level is what its switches send up over what they receive from below: leaves
// spines_per_pod * leaf_uplinks_per_spine * leaf_spine_bandwidth over their nodes' NIC bandwidth;
// spines cores_per_plane * spine_uplinks_per_core * spine_core_bandwidth over
// leaves_per_pod * leaf_uplinks_per_spine * leaf_spine_bandwidth. 1 is full bisection.
//
// Rail-optimised (rail_optimized): NIC k of every node sits on a leaf of rail k, as in NVIDIA's DGX
// SuperPOD reference designs (8 compute NICs per node, one per GPU). Leaves come in sets of `nics`, one
// leaf per rail: a set serves a scalable unit (SU) of endpoints_per_leaf nodes, and its leaf k holds
// NIC k of each of them (one port per node). GPU i of two nodes of one SU meet on rail i's leaf (NIC
// up, NIC down: no switch-to-switch hop); GPUs on different rails, or the same rail in different SUs,
// go up to a spine (2 hops; 4 across pods). leaves_per_pod must be a multiple of nics.
//
// Ids: switches are leaves (pod-major), then spines (pod-major), then cores (plane-major). Nodes fill
// leaves in order: without rails, endpoints_per_leaf / nics nodes per leaf, all NICs of a node on its
// leaf; with rails, endpoints_per_leaf nodes per set of nics leaves, NIC k on the set's k-th leaf
// (leaf (node / endpoints_per_leaf) * nics + k). Link ids
// after the node links: leaf->spine (Up), spine->leaf (Down), spine->core (Up), core->spine (Down),
// each block ordered by (lower switch, upper switch, parallel link) or (upper, lower, parallel).
//
// Groups (for placement) are pods with 3 levels and leaves (rail-optimised: SUs, the nodes that share
// a set of leaves) with 2: the domains below the narrowest shared links.
//
// Routing: up to the lowest common level, then down (up*/down*: the only minimal paths).
//  - Minimal: ECMP. Each up-link (spine, core, parallel link) and each parallel down-link is picked
//    by hashing flow_key with the seed and the two GPUs, as switches hash flow headers.
//  - Adaptive: each switch on the way up takes its least loaded up-link (LinkLoadView::load), and the
//    least loaded of the parallel down-links; ties go to the hashed ECMP choice, then the next ones in
//    cyclic order, so idle networks still spread flows. Without a load view it equals Minimal.
//  - Valiant is not offered: ECMP already spreads traffic obliviously over all up*/down* paths.
//
// Latency: every link entering a switch carries switch_latency_s (as in the dragonfly).
//
// LIMITATIONS:
//  - adaptive choices are greedy per hop and per flow at its start (no rerouting of running flows);
//    the down path is fixed by the up choice, as in any fat tree, so a hot destination leaf is not
//    avoided.
//  - rail-optimised: a GPU sends through its own NIC only (GPU g uses NIC g*nics/gpus, node.hpp); NCCL's
//    PXN, which first moves data over NVLink to the GPU on the destination's rail, is not modelled, so
//    cross-rail traffic always climbs to the spines. Spines are shared by all rails of a pod (not
//    split into per-rail spine groups).
//  - all pods and leaves alike; switches have infinite internal capacity (crossbar).
//  - no PCIe link between GPU and NIC (node.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include "topologies/node_links.hpp"
#include "topologies/routing.hpp"
#include "topologies/topology.hpp"

namespace exasim::topo {

struct FatTreeParams {
  NodeSpec node;
  GpuLinkMatrix gpu_links;  ///< empty: gpu_link_matrix(node)

  std::uint32_t levels = 2;  ///< 2 or 3
  std::uint32_t pods = 1;    ///< 3 levels only; 2 levels: 1
  std::uint32_t leaves_per_pod = 1;
  std::uint32_t spines_per_pod = 1;
  std::uint32_t endpoints_per_leaf = 1;      ///< NIC ports per leaf
  std::uint32_t leaf_uplinks_per_spine = 1;  ///< parallel leaf-spine links
  std::uint32_t cores_per_plane = 0;         ///< 3 levels only
  std::uint32_t spine_uplinks_per_core = 1;  ///< 3 levels only: parallel spine-core links
  std::uint32_t nodes = 0;                   ///< 0: every leaf full
  std::uint32_t ports_per_switch = 0;        ///< 0: not checked
  bool rail_optimized = false;               ///< NIC k of every node on rail k's leaf (see above)

  double leaf_spine_bandwidth_Bps = 0;  ///< per direction, per link
  double leaf_spine_latency_s = 0;      ///< wire only
  double spine_core_bandwidth_Bps = 0;
  double spine_core_latency_s = 0;
  double switch_latency_s = 0;  ///< per switch crossed

  RoutingPolicy routing = RoutingPolicy::Minimal;  ///< Minimal or Adaptive
  std::uint64_t seed = 0;
};

class FatTree final : public Topology {
 public:
  /// Throws std::invalid_argument on inconsistent parameters.
  explicit FatTree(const FatTreeParams& params);

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::uint32_t gpu_count() const override { return p_.nodes * p_.node.gpus; }
  [[nodiscard]] std::uint32_t gpus_per_node() const override { return p_.node.gpus; }
  [[nodiscard]] LinkId first_load_read_link() const override {
    return p_.routing == RoutingPolicy::Adaptive ? node_count() * node_links_.per_node()
                                                 : static_cast<LinkId>(links().size());
  }
  [[nodiscard]] std::uint32_t nics_per_node() const override { return p_.node.nics; }
  [[nodiscard]] std::uint32_t links_per_node() const override { return node_links_.per_node(); }
  [[nodiscard]] std::uint32_t switch_count() const override { return core_base_ + core_count(); }
  [[nodiscard]] std::uint32_t node_switch_count() const override { return node_links_.switched() ? node_count() : 0; }
  /// Populated pods (3 levels) or leaves (2 levels).
  [[nodiscard]] std::uint32_t group_count() const override;
  [[nodiscard]] std::uint32_t group_of_node(std::uint32_t node) const override;
  [[nodiscard]] LinkEnds link_ends(LinkId link) const override;
  void route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
             std::vector<LinkId>& out) const override;
  [[nodiscard]] TopologySummary summary() const override;

  [[nodiscard]] const FatTreeParams& params() const { return p_; }
  /// Nodes with a NIC on each leaf: they share the same leaves_per_unit() leaves (rail-optimised: an SU).
  [[nodiscard]] std::uint32_t nodes_per_leaf() const {
    return p_.rail_optimized ? p_.endpoints_per_leaf : p_.endpoints_per_leaf / p_.node.nics;
  }
  /// The leaves a node's NICs spread over: one per rail, or its one leaf.
  [[nodiscard]] std::uint32_t leaves_per_unit() const { return p_.rail_optimized ? p_.node.nics : 1; }
  [[nodiscard]] std::uint32_t leaf_count() const { return p_.pods * p_.leaves_per_pod; }
  [[nodiscard]] std::uint32_t spine_count() const { return p_.pods * p_.spines_per_pod; }
  [[nodiscard]] std::uint32_t core_count() const { return p_.levels == 3 ? p_.spines_per_pod * p_.cores_per_plane : 0; }
  /// The leaf a node's NIC is attached to.
  [[nodiscard]] std::uint32_t leaf_of_nic(std::uint32_t node, std::uint32_t nic) const {
    return node / nodes_per_leaf() * leaves_per_unit() + (p_.rail_optimized ? nic : 0);
  }
  /// Switch ids.
  [[nodiscard]] std::uint32_t leaf(std::uint32_t pod, std::uint32_t i) const { return pod * p_.leaves_per_pod + i; }
  [[nodiscard]] std::uint32_t spine(std::uint32_t pod, std::uint32_t j) const {
    return spine_base_ + pod * p_.spines_per_pod + j;
  }
  [[nodiscard]] std::uint32_t core(std::uint32_t plane, std::uint32_t c) const {
    return core_base_ + plane * p_.cores_per_plane + c;
  }

  // Link ids (k: parallel link).
  [[nodiscard]] LinkId nic_link(std::uint32_t node, std::uint32_t nic, bool up) const {
    return node_links_.nic_link(node, nic, up);
  }
  [[nodiscard]] LinkId leaf_up(std::uint32_t leaf, std::uint32_t j, std::uint32_t k) const;
  [[nodiscard]] LinkId spine_down(std::uint32_t pod, std::uint32_t j, std::uint32_t i, std::uint32_t k) const;
  [[nodiscard]] LinkId spine_up(std::uint32_t pod, std::uint32_t j, std::uint32_t c, std::uint32_t k) const;
  [[nodiscard]] LinkId core_down(std::uint32_t j, std::uint32_t c, std::uint32_t pod, std::uint32_t k) const;

  /// Up over down bandwidth per level, leaves first (see above).
  [[nodiscard]] std::vector<double> tapers() const;
  [[nodiscard]] std::uint32_t longest_minimal_route_hops() const;
  [[nodiscard]] std::uint32_t max_ports_used_per_switch() const;

 private:
  /// Picks one of `n` candidates: the hashed one (Minimal), or the least loaded starting from the
  /// hashed one (Adaptive). `link_of(i)` gives candidate i's link.
  template <class LinkOf>
  std::uint32_t pick(std::uint32_t n, std::uint64_t hash, const LinkLoadView* load, LinkOf link_of) const;

  FatTreeParams p_;
  NodeLinks node_links_;
  std::uint32_t spine_base_ = 0, core_base_ = 0;
  LinkId leaf_up_base_ = 0, spine_down_base_ = 0, spine_up_base_ = 0, core_down_base_ = 0;
};

}  // namespace exasim::topo
