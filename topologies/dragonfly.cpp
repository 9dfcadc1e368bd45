#include "topologies/dragonfly.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

#include "topologies/summary.hpp"

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

constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();
/// Spreads the hashes of adaptive routing's candidates (the golden-ratio constant of splitmix64).
constexpr std::uint64_t kCandidateStride = 0x9e3779b97f4a7c15ull;

/// The r-th of 0..n-1 once `a` and `b` (a != b) are removed.
std::uint32_t nth_excluding(std::uint32_t r, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t lo = std::min(a, b), hi = std::max(a, b);
  if (r >= lo) ++r;
  if (r >= hi) ++r;
  return r;
}

/// Rank of group h among the peers of group g (h != g).
std::uint32_t peer_rank(std::uint32_t g, std::uint32_t h) { return h < g ? h : h - 1; }

/// Index of `x` among 0..n-1 without `self`.
std::uint32_t skip_self(std::uint32_t x, std::uint32_t self) { return x < self ? x : x - 1; }

}  // namespace

std::string_view to_string(RoutingPolicy p) {
  switch (p) {
    case RoutingPolicy::Minimal: return "minimal";
    case RoutingPolicy::Valiant: return "valiant";
    case RoutingPolicy::Adaptive: return "adaptive";
  }
  return "?";
}

// At most 8 switch-to-switch hops (2D Valiant: row, column, global, row, column, global, row, column):
// a fixed array keeps candidate paths off the heap, since route() runs once per flow.
struct Dragonfly::SwitchPath {
  std::array<LinkId, 8> links;  ///< the first `hops` are set: candidates are built often, and never zeroed
  std::uint32_t hops = 0;
  void push(LinkId l) { links[hops++] = l; }
};

Dragonfly::Dragonfly(const DragonflyParams& params) : p_(params), node_links_(params.node, params.gpu_links) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("Dragonfly: " + what); };
  const auto& n = p_.node;
  if (p_.groups == 0 || p_.switches_per_group == 0 || p_.endpoints_per_switch == 0 || p_.rows == 0) {
    fail("groups, switches_per_group, rows and endpoints_per_switch must be positive");
  }
  if (p_.switches_per_group % p_.rows != 0) fail("switches_per_group must be a multiple of rows");
  per_group_ = FastDivisor(p_.switches_per_group);
  per_column_ = FastDivisor(columns());
  local_per_switch_ = local_links_per_switch();
  mixed_seed_ = mix(p_.seed);
  per_pair_ = FastDivisor(std::max(p_.global_links_per_group_pair, 1u));
  other_groups_ = FastDivisor(std::max(p_.groups, 3u) - 2);
  other_switches_ = FastDivisor(std::max(p_.switches_per_group, 3u) - 2);
  for (std::uint32_t i = 0; i < p_.switches_per_group; ++i) grid_.push_back({i / columns(), i % columns()});
  for (std::uint32_t i = 0; i < (p_.groups - 1) * p_.global_links_per_group_pair; ++i)
    port_switch_.push_back(i % p_.switches_per_group);
  if (p_.groups > 1 && p_.global_links_per_group_pair == 0) fail("global_links_per_group_pair must be positive");
  // A link of no bandwidth would carry a flow at rate 0 forever: the run would end as a deadlock
  // instead of naming the field (the JSON loader checks these; code that builds params may not).
  if (p_.switches_per_group > 1 && !(p_.local_bandwidth_Bps > 0)) fail("local_bandwidth_Bps must be > 0");
  if (two_dimensional() && !(p_.column_bandwidth_Bps > 0)) fail("column_bandwidth_Bps must be > 0 (2D groups)");
  if (p_.groups > 1 && !(p_.global_bandwidth_Bps > 0)) fail("global_bandwidth_Bps must be > 0");
  if (n.nics > p_.switches_per_group) fail("a node's NICs must land on different switches: nics > switches_per_group");
  p_.gpu_links = node_links_.matrix();
  if (!(p_.adaptive_bias >= 0)) fail("adaptive_bias must be >= 0");
  if (p_.adaptive_candidates < 1 || p_.adaptive_candidates > DragonflyParams::kMaxAdaptiveCandidates)
    fail("adaptive_candidates must be 1 to " + std::to_string(DragonflyParams::kMaxAdaptiveCandidates));
  if (p_.adaptive_parts < 1 || p_.adaptive_parts > DragonflyParams::kMaxAdaptiveParts)
    fail("adaptive_parts must be 1 to " + std::to_string(DragonflyParams::kMaxAdaptiveParts));
  if (p_.ports_per_switch != 0 && max_ports_used_per_switch() > p_.ports_per_switch) {
    fail("a switch needs " + std::to_string(max_ports_used_per_switch()) + " ports, it has " +
         std::to_string(p_.ports_per_switch));
  }

  const std::uint32_t capacity = (p_.switches_per_group / n.nics) * p_.endpoints_per_switch;
  if (p_.nodes_per_group == 0) p_.nodes_per_group = capacity;
  if (p_.nodes_per_group > capacity) {
    fail("nodes_per_group " + std::to_string(p_.nodes_per_group) + " exceeds the " + std::to_string(capacity) +
         " the NIC rule fits on a group");
  }
  nodes_per_group_ = p_.nodes_per_group;
  const std::uint64_t total_links = std::uint64_t{node_count()} * node_links_.per_node() +
                                    std::uint64_t{switch_count()} * local_links_per_switch() +
                                    std::uint64_t{p_.groups} * (p_.groups - 1) * p_.global_links_per_group_pair;
  if (std::uint64_t{p_.groups} * p_.nodes_per_group * n.gpus >= kUnreached || total_links >= kUnreached) {
    fail("too large for 32-bit ids");
  }
  reserve_links(total_links);

  const std::vector<Link> node = node_links_.node_template(p_.switch_latency_s);
  for (std::uint32_t i = 0; i < node_count(); ++i) {
    for (const Link& l : node) add_link(l);
  }

  auto graph = std::make_shared<detail::SwitchGraph>(switch_count());
  const auto check = [&](LinkId got, LinkId expected) {
    if (got != expected) throw std::logic_error("Dragonfly: link layout and id arithmetic disagree");
  };
  const std::uint32_t a = p_.switches_per_group, cols = columns();
  local_base_ = static_cast<LinkId>(links().size());
  for (std::uint32_t sw = 0; sw < switch_count(); ++sw) {
    const std::uint32_t first = group_of_switch(sw) * a, row = (sw - first) / cols, col = (sw - first) % cols;
    const auto add_local = [&](std::uint32_t t, LinkClass cls, double bandwidth, double latency) {
      const LinkId id = add_link({bandwidth, latency + p_.switch_latency_s, cls});
      check(id, local_link(sw, t));
      boost::add_edge(sw, t, detail::SwitchEdge{id, cls}, graph->g);
    };
    for (std::uint32_t c = 0; c < cols; ++c) {
      if (c != col) add_local(first + row * cols + c, LinkClass::Local, p_.local_bandwidth_Bps, p_.local_latency_s);
    }
    for (std::uint32_t r = 0; r < p_.rows; ++r) {
      if (r != row) {
        add_local(first + r * cols + col, LinkClass::LocalColumn, p_.column_bandwidth_Bps, p_.column_latency_s);
      }
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
  gpu_ports_.reserve(gpu_count());
  for (GpuId g = 0; g < gpu_count(); ++g) {
    const std::uint32_t at = node_of(g), nic = node_links_.nic_of_gpu(g);
    gpu_ports_.push_back({cursor(switch_of_nic(at, nic)), nic_link(at, nic, true), nic_link(at, nic, false)});
  }
  // The latencies route_with_latency() adds up, by kind, and a check that every link has its kind's.
  nic_up_latency_s_ = links()[gpu_ports_[0].up].latency_s;
  nic_down_latency_s_ = links()[gpu_ports_[0].down].latency_s;
  row_latency_s_ = p_.local_latency_s + p_.switch_latency_s;
  column_latency_s_ = p_.column_latency_s + p_.switch_latency_s;
  global_latency_s_ = p_.global_latency_s + p_.switch_latency_s;
  for (const GpuPort& port : gpu_ports_)
    if (links()[port.up].latency_s != nic_up_latency_s_ || links()[port.down].latency_s != nic_down_latency_s_)
      throw std::logic_error("Dragonfly: NIC links of different latencies");
  for (LinkId l = local_base_; l < links().size(); ++l)
    if (links()[l].latency_s != switch_link_latency_s(l))
      throw std::logic_error("Dragonfly: a switch link's latency differs from its kind's");
}

double Dragonfly::switch_link_latency_s(LinkId link) const {
  if (link >= global_base_) return global_latency_s_;
  // A switch's local links: its row's, then its column's (see the constructor).
  return p_.rows == 1 || (link - local_base_) % local_per_switch_ < columns() - 1 ? row_latency_s_ : column_latency_s_;
}

std::string Dragonfly::describe() const {
  const std::string shape = two_dimensional() ? std::to_string(p_.rows) + "x" + std::to_string(columns())
                                              : std::to_string(p_.switches_per_group);
  return std::string(two_dimensional() ? "2D dragonfly: " : "dragonfly: ") + std::to_string(p_.groups) + " groups x " +
         shape + " switches x " + std::to_string(p_.endpoints_per_switch) + " endpoints, " +
         std::to_string(p_.global_links_per_group_pair) + " global links per group pair; " +
         std::to_string(node_count()) + " nodes x " + std::to_string(p_.node.gpus) + " GPUs; " +
         std::string(to_string(p_.routing)) + " routing";
}

std::uint32_t Dragonfly::switch_of_nic(std::uint32_t node, std::uint32_t nic) const {
  const std::uint32_t group = node / nodes_per_group_, j = node % nodes_per_group_;
  return group * p_.switches_per_group + (j / p_.endpoints_per_switch) * p_.node.nics + nic;
}

std::uint32_t Dragonfly::switch_of_gpu(GpuId gpu) const {
  return switch_of_nic(node_of(gpu), node_links_.nic_of_gpu(gpu));
}

// A switch's row links come first, in column order without its own; then its column links, in row order.
LinkId Dragonfly::row_link(std::uint32_t sw, std::uint32_t from_col, std::uint32_t to_col) const {
  return local_base_ + sw * local_per_switch_ + skip_self(to_col, from_col);
}

LinkId Dragonfly::column_link(std::uint32_t sw, std::uint32_t from_row, std::uint32_t to_row) const {
  return local_base_ + sw * local_per_switch_ + (per_column_.divisor() - 1) + skip_self(to_row, from_row);
}

LinkId Dragonfly::local_link(std::uint32_t from_switch, std::uint32_t to_switch) const {
  const std::uint32_t cols = per_column_.divisor();
  const std::uint32_t s = per_group_.mod(from_switch), t = per_group_.mod(to_switch);
  if (per_group_.div(from_switch) == per_group_.div(to_switch) && s != t) {
    const std::uint32_t s_row = per_column_.div(s), t_row = per_column_.div(t);
    const std::uint32_t s_col = s - s_row * cols, t_col = t - t_row * cols;
    if (s_row == t_row) return row_link(from_switch, s_col, t_col);
    if (s_col == t_col) return column_link(from_switch, s_row, t_row);
  }
  throw std::invalid_argument("Dragonfly::local_link: switches share no row or column of a group");
}

LinkId Dragonfly::global_link(std::uint32_t from_group, std::uint32_t to_group, std::uint32_t k) const {
  const std::uint32_t L = p_.global_links_per_group_pair;
  return global_base_ + (from_group * (p_.groups - 1) + peer_rank(from_group, to_group)) * L + k;
}

std::uint32_t Dragonfly::global_link_switch(std::uint32_t from_group, std::uint32_t to_group, std::uint32_t k) const {
  const std::uint32_t port = peer_rank(from_group, to_group) * p_.global_links_per_group_pair + k;
  return from_group * p_.switches_per_group + per_group_.mod(port);
}

std::pair<std::uint32_t, std::uint32_t> Dragonfly::switch_link_ends(LinkId link) const {
  const std::uint32_t a = p_.switches_per_group, cols = columns();
  if (link >= local_base_ && link < global_base_) {
    const std::uint32_t from = (link - local_base_) / local_links_per_switch();
    const std::uint32_t idx = (link - local_base_) % local_links_per_switch();
    const std::uint32_t first = from - from % a, row = (from % a) / cols, col = (from % a) % cols;
    if (idx < cols - 1) return {from, first + row * cols + (idx < col ? idx : idx + 1)};
    const std::uint32_t r = idx - (cols - 1);
    return {from, first + (r < row ? r : r + 1) * cols + col};
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

LinkEnds Dragonfly::link_ends(LinkId link) const {
  if (link >= links().size()) throw std::out_of_range("Dragonfly::link_ends: no such link");
  if (link < local_base_) {
    const NodeLinks::Decoded d = node_links_.decode(link);
    return node_links_.ends(d, d.is_nic ? switch_of_nic(d.node, d.nic) : 0);
  }
  const auto [from, to] = switch_link_ends(link);
  return {{VertexKind::Switch, from}, {VertexKind::Switch, to}};
}

// Inlined into the candidates' builders (GCC left them calls: a call per hop of eight candidates).
[[gnu::always_inline]] inline void Dragonfly::step_local(Cursor& at, std::uint32_t to_index, SwitchPath& path) const {
  // Rows and columns from the grid table, not by division.
  if (at.index == to_index) return;
  const GridPlace from = grid_[at.index], to = grid_[to_index];
  const std::uint32_t first = at.group * p_.switches_per_group;
  if (from.column != to.column) {  // along the row to the target's column
    path.push(row_link(first + at.index, from.column, to.column));
    at.index = at.index - from.column + to.column;
  }
  if (from.row != to.row) path.push(column_link(first + at.index, from.row, to.row));
  at.index = to_index;
}

[[gnu::always_inline]] inline void Dragonfly::step_global(Cursor& at, std::uint32_t to_group, std::uint32_t k,
                                                          SwitchPath& path) const {
  // global_link_switch() and global_link() from the port table.
  const std::uint32_t L = p_.global_links_per_group_pair;
  const std::uint32_t rank = peer_rank(at.group, to_group);
  step_local(at, port_switch_[rank * L + k], path);
  path.push(global_base_ + (at.group * (p_.groups - 1) + rank) * L + k);
  at = {to_group, port_switch_[peer_rank(to_group, at.group) * L + k]};
}

[[gnu::always_inline]] inline Dragonfly::SwitchPath Dragonfly::minimal_path(Cursor s, Cursor t,
                                                                            std::uint64_t hash) const {
  SwitchPath path;
  Cursor at = s;
  if (s.group != t.group) step_global(at, t.group, per_pair_.mod64(hash), path);
  step_local(at, t.index, path);
  return path;
}

[[gnu::always_inline]] inline bool Dragonfly::valiant_path(Cursor s, Cursor t, std::uint64_t hash,
                                                           SwitchPath& path) const {
  // Built in `path` itself once it exists: built aside and copied, its links were read back in 16-byte
  // loads from the 4-byte stores that had just written them, a stalled store forwarding a candidate.
  if (s.group == t.group ? s.index == t.index || p_.switches_per_group < 3 : p_.groups < 3) return false;
  const std::uint64_t h1 = mix(hash), h2 = mix(h1), h3 = mix(h2);
  path.hops = 0;
  Cursor at = s;
  if (s.group == t.group) {
    step_local(at, nth_excluding(other_switches_.mod64(h1), s.index, t.index), path);
  } else {
    step_global(at, nth_excluding(other_groups_.mod64(h1), s.group, t.group), per_pair_.mod64(h2), path);
    step_global(at, t.group, per_pair_.mod64(h3), path);
  }
  step_local(at, t.index, path);
  return true;
}

bool Dragonfly::idle_inside_group(Cursor s, Cursor t, const SwitchPath& path, const LinkLoadView* load) const {
  // Inside a group the minimal path is unique (no other minimal candidate), and a non-minimal one
  // has more hops: an idle minimal path costs its hops, less than any detour's, so (adaptive_bias is
  // >= 0) it wins without a candidate being built. route()'s bound on detours (kLeastDetourCost)
  // reaches the same answer, but through the candidates' set-up and costing: this test first saves
  // 4 % of a 32,768-GCD packed run, whose hops mostly stay inside a group. (Between groups another
  // minimal candidate, through another global link, can be shorter.)
  if (s.group != t.group) return false;
  const std::uint32_t* dense = load != nullptr ? load->dense_loads() : nullptr;
  if (dense == nullptr) return false;
  for (std::uint32_t i = 0; i < path.hops; ++i)
    if (dense[path.links[i]] != 0) return false;
  return true;
}

[[gnu::always_inline]] inline void Dragonfly::route_to(GpuId src, GpuId dst, std::uint64_t flow_key,
                                                       const LinkLoadView* load, std::vector<LinkId>& out,
                                                       double* latency) const {
  if (src == dst || src >= gpu_count() || dst >= gpu_count()) throw std::logic_error("Dragonfly::route: bad ends");
  if (node_links_.node_of_gpu(src) == node_links_.node_of_gpu(dst)) {
    const std::size_t start = out.size();
    node_links_.route_inside(src, dst, out);
    if (latency != nullptr) *latency = latency_s(out.data() + start, out.size() - start);
    return;
  }

  const GpuPort& from = gpu_ports_[src];
  const GpuPort& to = gpu_ports_[dst];
  const Cursor s = from.sw, t = to.sw;
  const std::uint64_t hash = flow_hash_of_mixed_seed(mixed_seed_, flow_key, src, dst);

  SwitchPath path = minimal_path(s, t, hash);
  if (p_.routing == RoutingPolicy::Valiant) {
    (void)valiant_path(s, t, hash, path);
  } else if (p_.routing == RoutingPolicy::Adaptive && !idle_inside_group(s, t, path, load)) {
    // Loads count parts of flows when flows are routed in parts (route_parts()): in flows, busiest / P.
    const double parts = route_parts();
    const std::uint32_t* dense = load != nullptr ? load->dense_loads() : nullptr;
    constexpr double kNever = std::numeric_limits<double>::infinity();
    // A candidate's cost, or kNever as soon as it cannot beat `bound` (ties keep the earlier one): the
    // loads are cache misses, and most candidates lose on their first busy link.
    const auto cost = [load, dense, parts](const SwitchPath& c, double bound) {
      double busiest = 0;
      if (dense != nullptr && parts == 1) {
        std::uint32_t most = 0;
        const double hops = c.hops;
        for (std::uint32_t i = 0; i < c.hops; ++i) {
          most = std::max(most, dense[c.links[i]]);
          if ((1 + static_cast<double>(most)) * hops >= bound) return kNever;
        }
        return (1 + static_cast<double>(most)) * hops;
      }
      if (dense != nullptr) {
        std::uint32_t most = 0;
        for (std::uint32_t i = 0; i < c.hops; ++i) most = std::max(most, dense[c.links[i]]);
        busiest = most;
      } else if (load != nullptr) {
        for (std::uint32_t i = 0; i < c.hops; ++i) busiest = std::max(busiest, load->load(c.links[i]));
      }
      return (1 + (parts == 1 ? busiest : busiest / parts)) * c.hops;  // x / 1 is x: spare the division
    };
    // The least costly of adaptive_candidates minimal and as many non-minimal candidates, each from its
    // own hash; candidate 0 is the path Minimal / Valiant routing would take. Ties keep the earlier one.
    // The minimal candidates are built first (wiring arithmetic only), asking for their links' loads as
    // they go, and then costed: the loads are cache misses, which then arrive while the next candidates
    // are built rather than one after another; the non-minimal ones likewise, when they can win.
    // A minimal path is its global link's index alone (or unique inside a group): a candidate with an
    // index already tried costs the same and would lose the tie, so it is not built again.
    std::array<SwitchPath, DragonflyParams::kMaxAdaptiveCandidates> built;
    std::uint32_t count = 0;
    const auto prefetch = [dense](const SwitchPath& c) {
      if (dense != nullptr)
        for (std::uint32_t i = 0; i < c.hops; ++i) __builtin_prefetch(&dense[c.links[i]]);
    };
    prefetch(path);
    const std::uint32_t L = p_.global_links_per_group_pair;
    const bool one_group = s.group == t.group;
    std::uint64_t tried = std::uint64_t{1} << (per_pair_.mod64(hash) % 64);
    const auto candidate_hash = [hash](std::uint32_t c) { return c == 0 ? hash : mix(hash + kCandidateStride * c); };
    for (std::uint32_t c = 1; c < p_.adaptive_candidates && !one_group; ++c) {
      const std::uint64_t h = candidate_hash(c);
      if (const std::uint64_t bit = std::uint64_t{1} << (per_pair_.mod64(h) % 64); L > 64 || !(tried & bit)) {
        tried |= bit;
        built[count] = minimal_path(s, t, h);
        prefetch(built[count++]);
      }
    }
    // The cheapest of the first n built candidates, if cheaper than `best` (ties keep `chosen`).
    const auto cheapest = [&](std::uint32_t n, double& best, SwitchPath& chosen) {
      for (std::uint32_t i = 0; i < n; ++i)
        if (const double k = cost(built[i], best); k < best) {
          best = k;
          chosen = built[i];
        }
    };
    double minimal_cost = cost(path, kNever);
    cheapest(count, minimal_cost, path);
    // A non-minimal path has at least 2 switch-to-switch hops (through another switch of the group,
    // or out to another group and on), each costing at least 1: a minimal cost within the bias of
    // that cannot lose, and no detour is built.
    constexpr double kLeastDetourCost = 2;
    if (minimal_cost > kLeastDetourCost + p_.adaptive_bias) {
      count = 0;
      for (std::uint32_t c = 0; c < p_.adaptive_candidates; ++c)
        if (valiant_path(s, t, candidate_hash(c), built[count])) prefetch(built[count++]);
      SwitchPath detour;
      double detour_cost = kNever;
      cheapest(count, detour_cost, detour);
      if (minimal_cost > detour_cost + p_.adaptive_bias) path = detour;
    }
  }

  out.push_back(from.up);
  out.insert(out.end(), path.links.begin(), path.links.begin() + path.hops);
  out.push_back(to.down);
  if (latency != nullptr) {
    // Summed in route order from 0, as latency_s() does, so the two agree to the last bit.
    double total = 0;
    total += nic_up_latency_s_;
    for (std::uint32_t i = 0; i < path.hops; ++i) total += switch_link_latency_s(path.links[i]);
    *latency = total + nic_down_latency_s_;
  }
}

void Dragonfly::route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
                      std::vector<LinkId>& out) const {
  route_to(src, dst, flow_key, load, out, nullptr);
}

double Dragonfly::route_with_latency(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
                                     std::vector<LinkId>& out) const {
  double latency = 0;
  route_to(src, dst, flow_key, load, out, &latency);
  return latency;
}

std::size_t Dragonfly::link_count(LinkClass cls) const { return link_counts()[static_cast<std::size_t>(cls)]; }

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
  // Ports are dealt round-robin (see the wiring rules): the first switches get the extra one.
  const std::uint64_t ports = std::uint64_t{p_.groups - 1} * p_.global_links_per_group_pair;
  return static_cast<std::uint32_t>((ports + p_.switches_per_group - 1) / p_.switches_per_group);
}

std::uint32_t Dragonfly::max_ports_used_per_switch() const {
  return p_.endpoints_per_switch + local_links_per_switch() + max_global_ports_per_switch();
}

std::uint32_t Dragonfly::longest_minimal_route_hops() const {
  // A Minimal route is [local] global [local]. Each end of a global link is one switch, and some
  // switch of the group sits in another row and column than it as soon as the grid has two of each,
  // so the worst local leg is one hop per grid dimension wider than 1.
  const std::uint32_t local = (columns() > 1 ? 1 : 0) + (p_.rows > 1 ? 1 : 0);
  return p_.groups > 1 ? 1 + 2 * local : local;
}

std::uint32_t Dragonfly::switch_graph_diameter() const {
  const auto& graph = graph_->g;
  const std::uint32_t n = switch_count();
  std::vector<std::uint32_t> dist(n);
  std::uint32_t diameter = 0;
  for (std::uint32_t src = 0; src < n; ++src) {
    std::fill(dist.begin(), dist.end(), kUnreached);
    dist[src] = 0;
    boost::breadth_first_search(
        graph, boost::vertex(src, graph),
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge()))));
    for (std::uint32_t d : dist) {
      if (d == kUnreached) throw std::logic_error("Dragonfly: switch graph is not connected");
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

TopologySummary Dragonfly::summary() const {
  TopologySummary s;
  s.topology = two_dimensional() ? "dragonfly2d" : "dragonfly";
  fill_common_summary(s);
  s.global_links_per_group_pair = p_.groups > 1 ? p_.global_links_per_group_pair : 0;
  s.max_minimal_switch_hops = longest_minimal_route_hops();
  const double half_injection = double(p_.groups / 2) * injection_bandwidth_per_group_Bps();
  s.global_bisection_bandwidth_Bps = std::min(global_bisection_bandwidth_Bps(), half_injection);
  s.taper = taper();
  s.routing = std::string(to_string(p_.routing));
  return s;
}

}  // namespace exasim::topo
