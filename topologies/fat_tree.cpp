#include "topologies/fat_tree.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "topologies/summary.hpp"

namespace exasim::topo {

FatTree::FatTree(const FatTreeParams& params) : p_(params), node_links_(params.node, params.gpu_links) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("FatTree: " + what); };
  if (p_.levels != 2 && p_.levels != 3) fail("levels must be 2 or 3");
  if (p_.levels == 2) {
    if (p_.pods != 1) fail("a 2-level fat tree is one pod");
    p_.cores_per_plane = 0;
  }
  if (p_.pods == 0 || p_.leaves_per_pod == 0 || p_.spines_per_pod == 0 || p_.leaf_uplinks_per_spine == 0) {
    fail("pods, leaves_per_pod, spines_per_pod and leaf_uplinks_per_spine must be positive");
  }
  if (p_.levels == 3 && (p_.cores_per_plane == 0 || p_.spine_uplinks_per_core == 0)) {
    fail("cores_per_plane and spine_uplinks_per_core must be positive with 3 levels");
  }
  if (p_.rail_optimized) {
    if (p_.leaves_per_pod % p_.node.nics != 0) fail("rail-optimised: leaves_per_pod must be a multiple of nics");
  } else if (p_.endpoints_per_leaf < p_.node.nics) {
    fail("a leaf must hold at least one node's NICs");
  }
  const std::uint64_t capacity = std::uint64_t{leaf_count() / leaves_per_unit()} * nodes_per_leaf();
  if (p_.nodes == 0) p_.nodes = static_cast<std::uint32_t>(std::min<std::uint64_t>(capacity, 1u << 30));
  if (p_.nodes > capacity) {
    fail("nodes " + std::to_string(p_.nodes) + " exceed the " + std::to_string(capacity) + " the leaves hold");
  }
  if (p_.ports_per_switch != 0 && max_ports_used_per_switch() > p_.ports_per_switch) {
    fail("a switch needs " + std::to_string(max_ports_used_per_switch()) + " ports, it has " +
         std::to_string(p_.ports_per_switch));
  }
  spine_base_ = leaf_count();
  core_base_ = spine_base_ + spine_count();

  const std::uint64_t lu = p_.leaf_uplinks_per_spine, cu = p_.spine_uplinks_per_core;
  const std::uint64_t total = std::uint64_t{p_.nodes} * node_links_.per_node() +
                              2 * std::uint64_t{leaf_count()} * p_.spines_per_pod * lu +
                              2 * std::uint64_t{spine_count()} * p_.cores_per_plane * cu;
  if (std::uint64_t{p_.nodes} * p_.node.gpus >= std::numeric_limits<std::uint32_t>::max() ||
      total >= std::numeric_limits<std::uint32_t>::max()) {
    fail("too large for 32-bit ids");
  }
  reserve_links(total);
  const std::vector<Link> node = node_links_.node_template(p_.switch_latency_s);
  for (std::uint32_t n = 0; n < p_.nodes; ++n) {
    for (const Link& l : node) add_link(l);
  }
  const Link ls_up{p_.leaf_spine_bandwidth_Bps, p_.leaf_spine_latency_s + p_.switch_latency_s, LinkClass::Up};
  const Link ls_down{p_.leaf_spine_bandwidth_Bps, p_.leaf_spine_latency_s + p_.switch_latency_s, LinkClass::Down};
  const Link sc_up{p_.spine_core_bandwidth_Bps, p_.spine_core_latency_s + p_.switch_latency_s, LinkClass::Up};
  const Link sc_down{p_.spine_core_bandwidth_Bps, p_.spine_core_latency_s + p_.switch_latency_s, LinkClass::Down};
  leaf_up_base_ = static_cast<LinkId>(links().size());
  for (std::uint64_t i = 0; i < std::uint64_t{leaf_count()} * p_.spines_per_pod * lu; ++i) add_link(ls_up);
  spine_down_base_ = static_cast<LinkId>(links().size());
  for (std::uint64_t i = 0; i < std::uint64_t{leaf_count()} * p_.spines_per_pod * lu; ++i) add_link(ls_down);
  spine_up_base_ = static_cast<LinkId>(links().size());
  for (std::uint64_t i = 0; i < std::uint64_t{spine_count()} * p_.cores_per_plane * cu; ++i) add_link(sc_up);
  core_down_base_ = static_cast<LinkId>(links().size());
  for (std::uint64_t i = 0; i < std::uint64_t{spine_count()} * p_.cores_per_plane * cu; ++i) add_link(sc_down);
}

std::string FatTree::describe() const {
  std::string s = std::to_string(p_.levels) + "-level fat tree: ";
  if (p_.levels == 3) s += std::to_string(p_.pods) + " pods x ";
  s += std::to_string(p_.leaves_per_pod) + " leaves x " + std::to_string(p_.endpoints_per_leaf) + " endpoints, " +
       std::to_string(p_.spines_per_pod) + " spines";
  if (p_.rail_optimized) s.insert(s.find(':') + 1, " rail-optimised (" + std::to_string(p_.node.nics) + " rails),");
  if (p_.levels == 3) s += " per pod, " + std::to_string(core_count()) + " cores";
  return s + "; " + std::to_string(p_.nodes) + " nodes x " + std::to_string(p_.node.gpus) + " GPUs; " +
         std::string(to_string(p_.routing)) + " routing";
}

std::uint32_t FatTree::group_count() const {
  const std::uint32_t per_group = nodes_per_leaf() * (p_.levels == 3 ? p_.leaves_per_pod / leaves_per_unit() : 1);
  return (p_.nodes + per_group - 1) / per_group;
}

std::uint32_t FatTree::group_of_node(std::uint32_t node) const {
  const std::uint32_t l = leaf_of_nic(node, 0);
  return p_.levels == 3 ? l / p_.leaves_per_pod : l / leaves_per_unit();
}

LinkId FatTree::leaf_up(std::uint32_t leaf_id, std::uint32_t j, std::uint32_t k) const {
  return leaf_up_base_ + (leaf_id * p_.spines_per_pod + j) * p_.leaf_uplinks_per_spine + k;
}

LinkId FatTree::spine_down(std::uint32_t pod, std::uint32_t j, std::uint32_t i, std::uint32_t k) const {
  return spine_down_base_ + ((pod * p_.spines_per_pod + j) * p_.leaves_per_pod + i) * p_.leaf_uplinks_per_spine + k;
}

LinkId FatTree::spine_up(std::uint32_t pod, std::uint32_t j, std::uint32_t c, std::uint32_t k) const {
  return spine_up_base_ + ((pod * p_.spines_per_pod + j) * p_.cores_per_plane + c) * p_.spine_uplinks_per_core + k;
}

LinkId FatTree::core_down(std::uint32_t j, std::uint32_t c, std::uint32_t pod, std::uint32_t k) const {
  return core_down_base_ + ((j * p_.cores_per_plane + c) * p_.pods + pod) * p_.spine_uplinks_per_core + k;
}

LinkEnds FatTree::link_ends(LinkId link) const {
  if (link >= links().size()) throw std::out_of_range("FatTree::link_ends: no such link");
  const auto sw = [](std::uint32_t id) { return Vertex{VertexKind::Switch, id}; };
  if (link < leaf_up_base_) {
    const NodeLinks::Decoded d = node_links_.decode(link);
    return node_links_.ends(d, leaf_of_nic(d.node, d.nic));
  }
  const std::uint32_t lu = p_.leaf_uplinks_per_spine, cu = p_.spine_uplinks_per_core;
  if (link < spine_down_base_) {
    const std::uint32_t x = (link - leaf_up_base_) / lu, l = x / p_.spines_per_pod, j = x % p_.spines_per_pod;
    return {sw(l), sw(spine(l / p_.leaves_per_pod, j))};
  }
  if (link < spine_up_base_) {
    const std::uint32_t x = (link - spine_down_base_) / lu, s = x / p_.leaves_per_pod, i = x % p_.leaves_per_pod;
    const std::uint32_t pod = s / p_.spines_per_pod;
    return {sw(spine_base_ + s), sw(leaf(pod, i))};
  }
  if (link < core_down_base_) {
    const std::uint32_t x = (link - spine_up_base_) / cu, s = x / p_.cores_per_plane, c = x % p_.cores_per_plane;
    return {sw(spine_base_ + s), sw(core(s % p_.spines_per_pod, c))};
  }
  const std::uint32_t x = (link - core_down_base_) / cu, cr = x / p_.pods, pod = x % p_.pods;
  return {sw(core_base_ + cr), sw(spine(pod, cr / p_.cores_per_plane))};
}

template <class LinkOf>
std::uint32_t FatTree::pick(std::uint32_t n, std::uint64_t hash, const LinkLoadView* load, LinkOf link_of) const {
  const std::uint32_t first = static_cast<std::uint32_t>(hash % n);
  if (p_.routing != RoutingPolicy::Adaptive || load == nullptr || n == 1) return first;
  std::uint32_t best = first;
  double best_load = load->load(link_of(first));
  for (std::uint32_t step = 1; step < n && best_load > 0; ++step) {
    const std::uint32_t i = (first + step) % n;
    const double l = load->load(link_of(i));
    if (l < best_load) {
      best = i;
      best_load = l;
    }
  }
  return best;
}

void FatTree::route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
                    std::vector<LinkId>& out) const {
  if (src == dst || src >= gpu_count() || dst >= gpu_count()) throw std::logic_error("FatTree::route: bad ends");
  const std::uint32_t src_node = node_of(src), dst_node = node_of(dst);
  if (src_node == dst_node) {
    node_links_.route_inside(src, dst, out);
    return;
  }
  const std::uint32_t src_nic = node_links_.nic_of_gpu(src), dst_nic = node_links_.nic_of_gpu(dst);
  const std::uint32_t s = leaf_of_nic(src_node, src_nic), t = leaf_of_nic(dst_node, dst_nic);
  out.push_back(nic_link(src_node, src_nic, true));
  if (s != t) {
    const std::uint64_t h1 = flow_hash(p_.seed, flow_key, src, dst), h2 = mix(h1), h3 = mix(h2), h4 = mix(h3);
    const std::uint32_t lu = p_.leaf_uplinks_per_spine, cu = p_.spine_uplinks_per_core;
    const std::uint32_t sp = s / p_.leaves_per_pod, tp = t / p_.leaves_per_pod;
    const std::uint32_t ti = t % p_.leaves_per_pod;
    // Leaf up: one of spines * parallel links.
    const std::uint32_t up =
        pick(p_.spines_per_pod * lu, h1, load, [&](std::uint32_t i) { return leaf_up(s, i / lu, i % lu); });
    const std::uint32_t j = up / lu;
    out.push_back(leaf_up(s, j, up % lu));
    if (sp != tp) {
      const std::uint32_t cup =
          pick(p_.cores_per_plane * cu, h2, load, [&](std::uint32_t i) { return spine_up(sp, j, i / cu, i % cu); });
      const std::uint32_t c = cup / cu;
      out.push_back(spine_up(sp, j, c, cup % cu));
      const std::uint32_t k = pick(cu, h3, load, [&](std::uint32_t i) { return core_down(j, c, tp, i); });
      out.push_back(core_down(j, c, tp, k));
    }
    const std::uint32_t k = pick(lu, h4, load, [&](std::uint32_t i) { return spine_down(tp, j, ti, i); });
    out.push_back(spine_down(tp, j, ti, k));
  }
  out.push_back(nic_link(dst_node, dst_nic, false));
}

std::vector<double> FatTree::tapers() const {
  const double leaf_down = double(nodes_per_leaf()) * p_.node.nics / leaves_per_unit() * p_.node.nic_bandwidth_Bps;
  const double leaf_up_bw = double(p_.spines_per_pod) * p_.leaf_uplinks_per_spine * p_.leaf_spine_bandwidth_Bps;
  std::vector<double> t{leaf_down > 0 ? leaf_up_bw / leaf_down : 0};
  if (p_.levels == 3) {
    const double spine_down_bw = double(p_.leaves_per_pod) * p_.leaf_uplinks_per_spine * p_.leaf_spine_bandwidth_Bps;
    const double spine_up_bw = double(p_.cores_per_plane) * p_.spine_uplinks_per_core * p_.spine_core_bandwidth_Bps;
    t.push_back(spine_down_bw > 0 ? spine_up_bw / spine_down_bw : 0);
  }
  return t;
}

std::uint32_t FatTree::longest_minimal_route_hops() const {
  if (p_.levels == 3 && group_count() > 1) return 4;
  // Rail-optimised: two nodes of one SU already meet on different leaves when their GPUs' rails differ.
  return p_.nodes > 1 && leaf_of_nic(p_.nodes - 1, p_.node.nics - 1) > 0 ? 2 : 0;
}

std::uint32_t FatTree::max_ports_used_per_switch() const {
  const std::uint32_t leaf_ports = p_.endpoints_per_leaf + p_.spines_per_pod * p_.leaf_uplinks_per_spine;
  std::uint32_t spine_ports = p_.leaves_per_pod * p_.leaf_uplinks_per_spine;
  std::uint32_t core_ports = 0;
  if (p_.levels == 3) {
    spine_ports += p_.cores_per_plane * p_.spine_uplinks_per_core;
    core_ports = p_.pods * p_.spine_uplinks_per_core;
  }
  return std::max({leaf_ports, spine_ports, core_ports});
}

TopologySummary FatTree::summary() const {
  TopologySummary s;
  s.topology = "fat_tree";
  fill_common_summary(s);
  s.max_minimal_switch_hops = longest_minimal_route_hops();
  s.taper_per_level = tapers();
  s.taper = *std::min_element(s.taper_per_level.begin(), s.taper_per_level.end());
  // Cut at the top: half the pods (3 levels) or half the leaves (2 levels) against the rest, through
  // the links above them, capped by what the smaller half's NICs inject.
  const double leaf_up_bw = double(p_.spines_per_pod) * p_.leaf_uplinks_per_spine * p_.leaf_spine_bandwidth_Bps;
  double cut;
  if (p_.levels == 3 && p_.pods > 1) {
    const double pod_up =
        double(p_.spines_per_pod) * p_.cores_per_plane * p_.spine_uplinks_per_core * p_.spine_core_bandwidth_Bps;
    cut = double(p_.pods / 2) * std::min(pod_up, p_.leaves_per_pod * leaf_up_bw);
  } else {
    cut = double(leaf_count() / 2) * leaf_up_bw;
  }
  s.global_bisection_bandwidth_Bps = std::min(cut, s.injection_bandwidth_Bps / 2);
  s.routing = std::string(to_string(p_.routing));
  return s;
}

}  // namespace exasim::topo
