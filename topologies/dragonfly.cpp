#include "topologies/dragonfly.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

namespace exasim::topo {

namespace detail {

struct SwitchEdge {
  LinkId link = 0;
  LinkClass cls = LinkClass::Local;
};

// Vertices are switch ids. The graph is the structural record of the network (what `exasim topo`
// reports and BFS walks). Routing never searches it: a per-flow graph search would cost far more
// than the wiring arithmetic, which the constructor checks against every link it adds here.
struct SwitchGraph {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, SwitchEdge>;
  Graph g;
  explicit SwitchGraph(std::uint32_t switches) : g(switches) {}
};

}  // namespace detail

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser: cheap, and every input bit moves every output bit
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The r-th of 0..n-1 once `a` and `b` (a != b) are removed.
std::uint32_t nth_excluding(std::uint32_t r, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t lo = std::min(a, b), hi = std::max(a, b);
  if (r >= lo) ++r;
  if (r >= hi) ++r;
  return r;
}

/// Rank of group h among the peers of group g (h != g).
std::uint32_t peer_rank(std::uint32_t g, std::uint32_t h) { return h < g ? h : h - 1; }

}  // namespace

std::string_view to_string(RoutingPolicy p) {
  switch (p) {
    case RoutingPolicy::Minimal: return "minimal";
    case RoutingPolicy::Valiant: return "valiant";
    case RoutingPolicy::Adaptive: return "adaptive";
  }
  return "?";
}

// At most 5 switch-to-switch hops (Valiant: local-global-local-global-local): a fixed array keeps
// candidate paths off the heap, since route() runs once per flow.
struct Dragonfly::SwitchPath {
  std::array<LinkId, 5> links{};
  std::uint32_t hops = 0;
  void push(LinkId l) { links[hops++] = l; }
};

Dragonfly::Dragonfly(const DragonflyParams& params) : p_(params) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("Dragonfly: " + what); };
  const auto& n = p_.node;
  if (p_.groups == 0 || p_.switches_per_group == 0 || p_.endpoints_per_switch == 0) {
    fail("groups, switches_per_group and endpoints_per_switch must be positive");
  }
  if (p_.groups > 1 && p_.global_links_per_group_pair == 0) fail("global_links_per_group_pair must be positive");
  if (n.gpus == 0 || n.nics == 0) fail("a node needs at least one GPU and one NIC");
  if (n.nics > n.gpus) fail("at most one NIC per GPU is supported");
  if (n.nics > p_.switches_per_group) fail("a node's NICs must land on different switches: nics > switches_per_group");
  if (p_.gpu_links.gpus == 0) p_.gpu_links = nvlink_all_to_all(n.gpus, n.gpu_gpu_bandwidth_Bps);
  if (p_.gpu_links.gpus != n.gpus) fail("gpu_links is sized for a different GPU count");
  p_.gpu_links.validate();
  if (!(p_.adaptive_bias >= 0)) fail("adaptive_bias must be >= 0");

  const std::uint32_t capacity = (p_.switches_per_group / n.nics) * p_.endpoints_per_switch;
  if (p_.nodes_per_group == 0) p_.nodes_per_group = capacity;
  if (p_.nodes_per_group > capacity) {
    fail("nodes_per_group " + std::to_string(p_.nodes_per_group) + " exceeds the " + std::to_string(capacity) +
         " the NIC rule fits on a group");
  }
  nodes_per_group_ = p_.nodes_per_group;
  const std::uint64_t total_links =
      std::uint64_t{node_count()} * (n.gpus * n.gpus + 2 * n.nics) +
      std::uint64_t{switch_count()} * (p_.switches_per_group - 1) +
      std::uint64_t{p_.groups} * (p_.groups - 1) * p_.global_links_per_group_pair;
  if (std::uint64_t{node_count()} * n.gpus > kNone || total_links >= kNone) fail("too large for 32-bit ids");

  // Node internals: one slot per linked ordered pair, the same for every node.
  const std::uint32_t g = n.gpus;
  pair_slot_.assign(std::size_t{g} * g, kNone);
  via_.assign(std::size_t{g} * g, kNone);
  std::uint32_t slots = 0;
  for (std::uint32_t a = 0; a < g; ++a) {
    for (std::uint32_t b = 0; b < g; ++b) {
      if (p_.gpu_links.linked(a, b)) {
        pair_slot_[a * g + b] = slots++;
      } else if (a != b) {
        via_[a * g + b] = *p_.gpu_links.via(a, b);  // validate() guaranteed it exists
      }
    }
  }
  links_per_node_ = slots + 2 * n.nics;

  for (std::uint32_t node = 0; node < node_count(); ++node) {
    for (std::uint32_t a = 0; a < g; ++a) {
      for (std::uint32_t b = 0; b < g; ++b) {
        if (pair_slot_[a * g + b] != kNone) add_link({p_.gpu_links.at(a, b), n.gpu_gpu_latency_s, LinkClass::GpuGpu});
      }
    }
    for (std::uint32_t nic = 0; nic < n.nics; ++nic) {
      add_link({n.nic_bandwidth_Bps, n.nic_latency_s + p_.switch_latency_s, LinkClass::NicUp});
      add_link({n.nic_bandwidth_Bps, n.nic_latency_s, LinkClass::NicDown});
    }
  }

  auto graph = std::make_shared<detail::SwitchGraph>(switch_count());
  const auto check = [&](LinkId got, LinkId expected) {
    if (got != expected) throw std::logic_error("Dragonfly: link layout and id arithmetic disagree");
  };
  const std::uint32_t a = p_.switches_per_group;
  local_base_ = static_cast<LinkId>(links().size());
  for (std::uint32_t sw = 0; sw < switch_count(); ++sw) {
    const std::uint32_t first = group_of_switch(sw) * a;
    for (std::uint32_t t = first; t < first + a; ++t) {
      if (t == sw) continue;
      const LinkId id = add_link({p_.local_bandwidth_Bps, p_.local_latency_s + p_.switch_latency_s, LinkClass::Local});
      check(id, local_link(sw, t));
      boost::add_edge(sw, t, detail::SwitchEdge{id, LinkClass::Local}, graph->g);
    }
  }
  global_base_ = static_cast<LinkId>(links().size());
  for (std::uint32_t from = 0; from < p_.groups; ++from) {
    for (std::uint32_t to = 0; to < p_.groups; ++to) {
      if (to == from) continue;
      for (std::uint32_t k = 0; k < p_.global_links_per_group_pair; ++k) {
        const LinkId id =
            add_link({p_.global_bandwidth_Bps, p_.global_latency_s + p_.switch_latency_s, LinkClass::Global});
        check(id, global_link(from, to, k));
        // The far end is the same physical link seen from `to`: its port towards `from` with the same k.
        boost::add_edge(global_link_switch(from, to, k), global_link_switch(to, from, k),
                        detail::SwitchEdge{id, LinkClass::Global}, graph->g);
      }
    }
  }
  graph_ = std::move(graph);
}

std::string Dragonfly::describe() const {
  return "dragonfly: " + std::to_string(p_.groups) + " groups x " + std::to_string(p_.switches_per_group) +
         " switches x " + std::to_string(p_.endpoints_per_switch) + " endpoints, " +
         std::to_string(p_.global_links_per_group_pair) + " global links per group pair; " +
         std::to_string(node_count()) + " nodes x " + std::to_string(p_.node.gpus) + " GPUs; " +
         std::string(to_string(p_.routing)) + " routing";
}

std::uint32_t Dragonfly::switch_of_nic(std::uint32_t node, std::uint32_t nic) const {
  const std::uint32_t group = node / nodes_per_group_, j = node % nodes_per_group_;
  return group * p_.switches_per_group + (j / p_.endpoints_per_switch) * p_.node.nics + nic;
}

std::uint32_t Dragonfly::switch_of_gpu(GpuId gpu) const {
  return switch_of_nic(node_of(gpu), nic_of_local_gpu(p_.node, gpu % p_.node.gpus));
}

LinkId Dragonfly::gpu_link(std::uint32_t node, std::uint32_t from, std::uint32_t to) const {
  const std::uint32_t slot = pair_slot_[from * p_.node.gpus + to];
  if (slot == kNone) throw std::invalid_argument("Dragonfly::gpu_link: GPUs not directly linked");
  return node * links_per_node_ + slot;
}

LinkId Dragonfly::nic_link(std::uint32_t node, std::uint32_t nic, bool up) const {
  return node * links_per_node_ + (links_per_node_ - 2 * p_.node.nics) + 2 * nic + (up ? 0 : 1);
}

LinkId Dragonfly::local_link(std::uint32_t from_switch, std::uint32_t to_switch) const {
  const std::uint32_t a = p_.switches_per_group;
  const std::uint32_t s = from_switch % a, t = to_switch % a;
  return local_base_ + from_switch * (a - 1) + (t < s ? t : t - 1);
}

LinkId Dragonfly::global_link(std::uint32_t from_group, std::uint32_t to_group, std::uint32_t k) const {
  const std::uint32_t L = p_.global_links_per_group_pair;
  return global_base_ + (from_group * (p_.groups - 1) + peer_rank(from_group, to_group)) * L + k;
}

std::uint32_t Dragonfly::global_link_switch(std::uint32_t from_group, std::uint32_t to_group, std::uint32_t k) const {
  const std::uint32_t port = peer_rank(from_group, to_group) * p_.global_links_per_group_pair + k;
  return from_group * p_.switches_per_group + port % p_.switches_per_group;
}

std::pair<std::uint32_t, std::uint32_t> Dragonfly::switch_link_ends(LinkId link) const {
  const std::uint32_t a = p_.switches_per_group;
  if (link >= local_base_ && link < global_base_) {
    const std::uint32_t from = (link - local_base_) / (a - 1), idx = (link - local_base_) % (a - 1);
    const std::uint32_t s = from % a;
    return {from, from - s + (idx < s ? idx : idx + 1)};
  }
  if (link >= global_base_ && link < links().size()) {
    const std::uint32_t L = p_.global_links_per_group_pair;
    const std::uint32_t pair = (link - global_base_) / L, k = (link - global_base_) % L;
    const std::uint32_t from = pair / (p_.groups - 1), rank = pair % (p_.groups - 1);
    const std::uint32_t to = rank < from ? rank : rank + 1;
    return {global_link_switch(from, to, k), global_link_switch(to, from, k)};
  }
  throw std::invalid_argument("Dragonfly::switch_link_ends: not a switch-to-switch link");
}

void Dragonfly::append_local(std::uint32_t& at, std::uint32_t to, SwitchPath& path) const {
  if (at == to) return;
  path.push(local_link(at, to));
  at = to;
}

void Dragonfly::append_global(std::uint32_t& at, std::uint32_t to_group, std::uint32_t k, SwitchPath& path) const {
  const std::uint32_t from_group = group_of_switch(at);
  append_local(at, global_link_switch(from_group, to_group, k), path);
  path.push(global_link(from_group, to_group, k));
  at = global_link_switch(to_group, from_group, k);
}

Dragonfly::SwitchPath Dragonfly::minimal_path(std::uint32_t s, std::uint32_t t, std::uint64_t hash) const {
  SwitchPath path;
  std::uint32_t at = s;
  if (group_of_switch(s) != group_of_switch(t)) {
    append_global(at, group_of_switch(t), static_cast<std::uint32_t>(hash % p_.global_links_per_group_pair), path);
  }
  append_local(at, t, path);
  return path;
}

bool Dragonfly::valiant_path(std::uint32_t s, std::uint32_t t, std::uint64_t hash, SwitchPath& path) const {
  const std::uint32_t gs = group_of_switch(s), gt = group_of_switch(t);
  const std::uint64_t h1 = mix(hash), h2 = mix(h1), h3 = mix(h2);
  SwitchPath p;
  std::uint32_t at = s;
  if (gs == gt) {
    const std::uint32_t a = p_.switches_per_group;
    if (s == t || a < 3) return false;
    const std::uint32_t mid = gs * a + nth_excluding(static_cast<std::uint32_t>(h1 % (a - 2)), s % a, t % a);
    append_local(at, mid, p);
  } else {
    if (p_.groups < 3) return false;
    const std::uint32_t L = p_.global_links_per_group_pair;
    const std::uint32_t mid = nth_excluding(static_cast<std::uint32_t>(h1 % (p_.groups - 2)), gs, gt);
    append_global(at, mid, static_cast<std::uint32_t>(h2 % L), p);
    append_global(at, gt, static_cast<std::uint32_t>(h3 % L), p);
  }
  append_local(at, t, p);
  path = p;
  return true;
}

void Dragonfly::route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
                      std::vector<LinkId>& out) const {
  if (src == dst || src >= gpu_count() || dst >= gpu_count()) throw std::logic_error("Dragonfly::route: bad ends");
  const std::uint32_t g = p_.node.gpus;
  const std::uint32_t src_node = src / g, dst_node = dst / g, a = src % g, b = dst % g;
  if (src_node == dst_node) {
    const std::uint32_t mid = via_[a * g + b];
    if (mid == kNone) {
      out.push_back(gpu_link(src_node, a, b));
    } else {
      out.push_back(gpu_link(src_node, a, mid));
      out.push_back(gpu_link(src_node, mid, b));
    }
    return;
  }

  const std::uint32_t src_nic = nic_of_local_gpu(p_.node, a), dst_nic = nic_of_local_gpu(p_.node, b);
  const std::uint32_t s = switch_of_nic(src_node, src_nic), t = switch_of_nic(dst_node, dst_nic);
  const std::uint64_t hash = mix(mix(p_.seed) ^ flow_key ^ mix((std::uint64_t{src} << 32) | dst));

  SwitchPath path = minimal_path(s, t, hash);
  if (p_.routing == RoutingPolicy::Valiant) {
    (void)valiant_path(s, t, hash, path);
  } else if (p_.routing == RoutingPolicy::Adaptive) {
    SwitchPath detour;
    if (valiant_path(s, t, hash, detour)) {
      const auto cost = [load](const SwitchPath& c) {
        double busiest = 0;
        if (load != nullptr) {
          for (std::uint32_t i = 0; i < c.hops; ++i) busiest = std::max(busiest, load->load(c.links[i]));
        }
        return (1 + busiest) * c.hops;
      };
      if (cost(path) > cost(detour) + p_.adaptive_bias) path = detour;
    }
  }

  out.push_back(nic_link(src_node, src_nic, true));
  out.insert(out.end(), path.links.begin(), path.links.begin() + path.hops);
  out.push_back(nic_link(dst_node, dst_nic, false));
}

std::size_t Dragonfly::link_count(LinkClass cls) const {
  return static_cast<std::size_t>(
      std::count_if(links().begin(), links().end(), [cls](const Link& l) { return l.cls == cls; }));
}

std::uint32_t Dragonfly::global_links_between(std::uint32_t g, std::uint32_t h) const {
  const auto& graph = graph_->g;
  std::uint32_t count = 0;
  for (std::uint32_t sw = g * p_.switches_per_group; sw < (g + 1) * p_.switches_per_group; ++sw) {
    for (auto [it, end] = boost::out_edges(sw, graph); it != end; ++it) {
      if (graph[*it].cls == LinkClass::Global &&
          group_of_switch(static_cast<std::uint32_t>(boost::target(*it, graph))) == h) {
        ++count;
      }
    }
  }
  return count;
}

std::uint32_t Dragonfly::max_global_ports_per_switch() const {
  const auto& graph = graph_->g;
  std::uint32_t most = 0;
  for (std::uint32_t sw = 0; sw < switch_count(); ++sw) {
    std::uint32_t ports = 0;
    for (auto [it, end] = boost::out_edges(sw, graph); it != end; ++it) ports += graph[*it].cls == LinkClass::Global;
    most = std::max(most, ports);
  }
  return most;
}

std::uint32_t Dragonfly::longest_minimal_route_hops() const {
  // A Minimal route is [local] global [local], and each end of a global link is one switch, so every
  // other switch of the group needs the local hop: the worst case is reached as soon as a group has
  // two switches. Inside a group it is the single direct local link.
  const std::uint32_t local = p_.switches_per_group > 1 ? 1 : 0;
  return p_.groups > 1 ? 1 + 2 * local : local;
}

std::uint32_t Dragonfly::switch_graph_diameter() const {
  const auto& graph = graph_->g;
  const std::uint32_t n = switch_count();
  std::vector<std::uint32_t> dist(n);
  std::uint32_t diameter = 0;
  for (std::uint32_t src = 0; src < n; ++src) {
    std::fill(dist.begin(), dist.end(), kNone);
    dist[src] = 0;
    boost::breadth_first_search(
        graph, boost::vertex(src, graph),
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge()))));
    for (std::uint32_t d : dist) {
      if (d == kNone) throw std::logic_error("Dragonfly: switch graph is not connected");
      diameter = std::max(diameter, d);
    }
  }
  return diameter;
}

double Dragonfly::global_bisection_bandwidth_Bps() const {
  const double half = p_.groups / 2, other = p_.groups - p_.groups / 2;
  return half * other * p_.global_links_per_group_pair * p_.global_bandwidth_Bps;
}

double Dragonfly::global_bandwidth_per_group_Bps() const {
  return double(p_.groups - 1) * p_.global_links_per_group_pair * p_.global_bandwidth_Bps;
}

double Dragonfly::injection_bandwidth_per_group_Bps() const {
  return double(nodes_per_group_) * p_.node.nics * p_.node.nic_bandwidth_Bps;
}

double Dragonfly::taper() const {
  const double inject = injection_bandwidth_per_group_Bps();
  return inject > 0 ? global_bandwidth_per_group_Bps() / inject : 0;
}

}  // namespace exasim::topo
