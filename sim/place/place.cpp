#include "sim/place/place.hpp"

#include "sim/core/error.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "sim/tune/analytic.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

namespace exasim::place {

namespace {

/// The allocation's groups, most allocated nodes first (then by group id); each with its nodes in the
/// allocation's order.
std::vector<std::vector<std::uint32_t>> groups_by_size(const topo::Topology& topology, const Allocation& allocation) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_group;
  for (const auto n : allocation.nodes) by_group[topology.group_of_node(n)].push_back(n);
  std::vector<std::vector<std::uint32_t>> groups;
  for (auto& [g, nodes] : by_group) groups.push_back(std::move(nodes));
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return groups;
}

/// Round-robin over `groups`, `block` nodes from each in turn, until `needed` nodes are taken.
/// Precondition: the groups hold at least `needed` nodes.
std::vector<std::uint32_t> round_robin(const std::vector<std::vector<std::uint32_t>>& groups, std::size_t count,
                                       std::uint32_t block, std::uint32_t needed) {
  std::vector<std::uint32_t> nodes;
  std::vector<std::size_t> next(count, 0);
  while (nodes.size() < needed) {
    for (std::size_t g = 0; g < count && nodes.size() < needed; ++g)
      for (std::uint32_t b = 0; b < block && next[g] < groups[g].size() && nodes.size() < needed; ++b)
        nodes.push_back(groups[g][next[g]++]);
  }
  return nodes;
}

std::uint64_t ring_key(std::uint32_t stride, std::uint32_t size) { return (std::uint64_t{stride} << 32) | size; }

}  // namespace

std::vector<std::uint32_t> random_order(const Allocation& allocation, std::uint32_t needed, std::uint64_t seed) {
  return scenario::draw_nodes(allocation.nodes, needed, seed);  // on the whole machine: the random policy's
}

std::vector<std::uint32_t> spread_order(const topo::Topology& topology, const Allocation& allocation,
                                        std::uint32_t needed) {
  // By group id, as the spread policy: round_robin over the groups in id order.
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_group;
  for (const auto n : allocation.nodes) by_group[topology.group_of_node(n)].push_back(n);
  std::vector<std::vector<std::uint32_t>> groups;
  for (auto& [g, nodes] : by_group) groups.push_back(std::move(nodes));
  return round_robin(groups, groups.size(), 1, needed);
}

std::vector<NodeOrder> node_orders(const topo::Topology& topology, const Allocation& allocation, std::uint32_t needed) {
  std::vector<NodeOrder> orders;
  std::set<std::vector<std::uint32_t>> seen;
  auto add = [&](std::string label, std::vector<std::uint32_t> nodes, bool baseline) {
    if (!seen.insert(nodes).second && !baseline) return;
    orders.push_back({std::move(label), std::move(nodes), baseline});
  };
  add(allocation.from_file ? "scheduler" : "packed",
      std::vector<std::uint32_t>(allocation.nodes.begin(), allocation.nodes.begin() + needed), true);
  add("spread", spread_order(topology, allocation, needed), true);
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    add("random " + std::to_string(seed), random_order(allocation, needed, seed), true);

  const auto groups = groups_by_size(topology, allocation);
  std::vector<std::uint32_t> packed;
  for (const auto& g : groups)
    for (const auto n : g)
      if (packed.size() < needed) packed.push_back(n);
  add("groups packed", std::move(packed), false);
  std::vector<std::size_t> counts;
  for (std::size_t g = 1; g < groups.size(); g *= 2) counts.push_back(g);
  counts.push_back(groups.size());
  for (const auto count : counts) {
    std::size_t held = 0;
    for (std::size_t g = 0; g < count; ++g) held += groups[g].size();
    if (held < needed) continue;
    for (std::uint32_t block = 1;; block *= 2) {
      add("round-robin " + std::to_string(count) + (count == 1 ? " group x " : " groups x ") + std::to_string(block) +
              (block == 1 ? " node" : " nodes"),
          round_robin(groups, count, block, needed), false);
      if (std::uint64_t{block} * count >= needed) break;
    }
  }
  return orders;
}

std::vector<LocalOrder> local_orders(const topo::Topology& topology, const std::vector<std::uint32_t>& ring_sizes) {
  const std::uint32_t n = topology.gpus_per_node();
  auto label_of = [](const std::vector<std::uint32_t>& gpus) {
    std::string label = "gpus ";
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (i > 0) label += ',';
      label += std::to_string(gpus[i]);
    }
    return label;
  };
  std::vector<std::uint32_t> identity(n);
  std::iota(identity.begin(), identity.end(), 0u);
  std::vector<LocalOrder> out = {{label_of(identity), identity}};
  if (n > 8) return out;
  // Routes between the GPUs of node 0, once.
  std::vector<std::vector<topo::LinkId>> route(n * n);
  for (std::uint32_t a = 0; a < n; ++a)
    for (std::uint32_t b = 0; b < n; ++b)
      if (a != b) topology.route(a, b, 0, nullptr, route[a * n + b]);
  const auto& links = topology.links();
  std::map<topo::LinkId, std::uint32_t> flows;
  std::set<std::uint32_t> sizes(ring_sizes.begin(), ring_sizes.end());
  for (const auto p : sizes) {
    if (p <= 2 || n % p != 0) continue;  // a pair is a pair in any order
    std::vector<std::uint32_t> order = identity, best = identity;
    std::pair<double, double> best_key{-1, -1};
    do {
      flows.clear();
      for (std::uint32_t slot = 0; slot < n; ++slot) {
        const std::uint32_t next = slot / p * p + (slot % p + 1) % p;
        for (const auto l : route[order[slot] * n + order[next]]) ++flows[l];
      }
      double slowest = std::numeric_limits<double>::infinity(), total = 0;
      for (std::uint32_t slot = 0; slot < n; ++slot) {
        const std::uint32_t next = slot / p * p + (slot % p + 1) % p;
        double share = std::numeric_limits<double>::infinity();
        for (const auto l : route[order[slot] * n + order[next]])
          share = std::min(share, links[l].bandwidth_Bps / flows[l]);
        slowest = std::min(slowest, share);
        total += share;
      }
      if (std::pair{slowest, total} > best_key) best_key = {slowest, total}, best = order;
    } while (std::next_permutation(order.begin(), order.end()));
    if (best != identity && std::none_of(out.begin(), out.end(), [&](const LocalOrder& l) { return l.gpus == best; }))
      out.push_back({label_of(best), best});
  }
  return out;
}

std::vector<std::uint32_t> gpu_of_rank(const schedule::ProcessGrid& grid, const std::vector<std::uint8_t>& dim_order,
                                       const std::vector<std::uint32_t>& nodes, std::uint32_t gpus_per_node,
                                       const std::vector<std::uint32_t>& local) {
  const auto& dims = grid.dims();
  std::vector<std::uint32_t> slot_stride(dims.size(), 1);
  std::uint32_t stride = 1;
  for (const auto d : dim_order) {
    slot_stride[d] = stride;
    stride *= dims[d].size;
  }
  std::vector<std::uint32_t> gpu(grid.world_size());
  for (std::uint32_t r = 0; r < gpu.size(); ++r) {
    std::uint32_t slot = 0;
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (!dims[d].nested) slot += grid.coord(r, d) * slot_stride[d];  // a view's digits are its parents'

    const std::uint32_t in_node = slot % gpus_per_node;
    gpu[r] = nodes[slot / gpus_per_node] * gpus_per_node + (local.empty() ? in_node : local[in_node]);
  }
  return gpu;
}

std::string dims_label(const schedule::ProcessGrid& grid, const std::vector<std::uint8_t>& dim_order) {
  std::string out;
  for (const auto d : dim_order) {
    if (grid.dims()[d].nested) continue;  // it moves with the dimensions it is a digit of
    if (!out.empty()) out += ',';
    out += grid.dims()[d].name;
  }
  return out;
}

namespace {

/// Dimension orders, one per distinct set of slot strides of the dimensions with more than one member
/// (a dimension of size 1 may go anywhere). Views (nested dimensions) stay last, in grid order: they
/// move with the dimensions whose digits they are.
std::vector<std::vector<std::uint8_t>> dimension_orders(const schedule::ProcessGrid& grid) {
  const auto& dims = grid.dims();
  std::vector<std::uint8_t> order, views;
  for (std::size_t d = 0; d < dims.size(); ++d)
    (dims[d].nested ? views : order).push_back(static_cast<std::uint8_t>(d));
  std::vector<std::vector<std::uint8_t>> out;
  std::set<std::vector<std::uint32_t>> strides_seen;
  do {
    std::vector<std::uint32_t> strides(dims.size(), 0);
    std::uint32_t stride = 1;
    for (const auto d : order) {
      if (dims[d].size > 1) strides[d] = stride;
      stride *= dims[d].size;
    }
    if (strides_seen.insert(strides).second) {
      out.push_back(order);
      out.back().insert(out.back().end(), views.begin(), views.end());
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

}  // namespace

SearchResult search(const scenario::Scenario& s, const topo::Topology& topology, const Allocation& allocation,
                    const SearchOptions& options) {
  const auto& scheme = scenario::scheme_of(s);
  const auto start = std::chrono::steady_clock::now();
  const std::uint32_t per_node = topology.gpus_per_node();
  const std::uint32_t needed = (s.gpus + per_node - 1) / per_node;
  SearchResult result;
  result.orders = node_orders(topology, allocation, needed);

  // Where every rank runs one stream, the plans of 1 and 2 layers, built once: every candidate is a
  // replay of them (analytic.hpp). Else each candidate is priced by the scheme's estimate (Megatron),
  // its rings routed under the candidate's rank -> GPU vector.
  tune::AnalyticModel model(s);
  const bool uniform = scheme.uniform_plan != nullptr;
  const std::int64_t layers = s.model.layers;
  const auto plan1 = uniform ? scheme.uniform_plan(s, std::min<std::int64_t>(layers, 1)) : schedule::Plan{};
  const auto plan2 = uniform ? scheme.uniform_plan(s, std::min<std::int64_t>(layers, 2)) : schedule::Plan{};
  result.grid = uniform ? plan2.grid : scheme.build_plan(s).grid;
  const auto& dims = result.grid.dims();
  const auto dim_orders = dimension_orders(result.grid);
  result.dim_orders = dim_orders.size();
  std::vector<std::uint32_t> sizes;
  for (const auto& d : dims) sizes.push_back(d.size);
  result.locals = local_orders(topology, sizes);

  const double step_overhead_s = s.machine.collective_step_overhead_s;
  for (std::size_t o = 0; o < result.orders.size(); ++o) {
    const auto& order = result.orders[o];
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!order.baseline && elapsed > options.budget_s) break;
    result.orders_scored = o + 1;
    for (std::size_t l = 0; l < result.locals.size(); ++l) {
      const auto& local = result.locals[l].gpus;
      std::vector<std::uint32_t> gpu_of_slot(uniform ? s.gpus : 0);
      for (std::uint32_t slot = 0; slot < gpu_of_slot.size(); ++slot)
        gpu_of_slot[slot] = order.nodes[slot / per_node] * per_node + local[slot % per_node];
      std::map<std::uint64_t, tune::RingLink> rings_of;
      for (const auto& dim_order : dim_orders) {
        Candidate c;
        c.order = o;
        c.local = l;
        c.dims = dim_order;
        if (!uniform) {
          model.set_placement(gpu_of_rank(result.grid, dim_order, order.nodes, per_node, local));
          model.prepare(s);
          c.analytic_s = model.iteration_s(s);
          for (const auto& d : dims) c.ring_Bps.push_back(model.ring(d.stride, d.size).bandwidth_Bps);
          result.rings_routed += dims.size();
          result.ranked.push_back(std::move(c));
          continue;
        }
        // A baseline is simulated with the grid's own layout only; its other dimension orders are
        // candidates like any.
        std::vector<tune::RingLink> rings(dims.size());
        std::uint32_t stride = 1;
        for (const auto d : dim_order) {
          auto it = rings_of.find(ring_key(stride, dims[d].size));
          if (it == rings_of.end()) {
            it = rings_of
                     .emplace(ring_key(stride, dims[d].size),
                              tune::route_ring(topology, gpu_of_slot, s.gpus, stride, dims[d].size, step_overhead_s,
                                               &s.machine.step_costs))
                     .first;
            ++result.rings_routed;
          }
          rings[d] = it->second;
          stride *= dims[d].size;
        }
        const double t1 = model.replay_s(plan1, rings);
        const double t2 = layers <= 1 ? t1 : model.replay_s(plan2, rings);
        c.analytic_s = layers <= 2 ? (layers <= 1 ? t1 : t2) : t2 + static_cast<double>(layers - 2) * (t2 - t1);
        for (const auto& r : rings) c.ring_Bps.push_back(r.bandwidth_Bps);
        result.ranked.push_back(std::move(c));
      }
    }
  }
  std::stable_sort(result.ranked.begin(), result.ranked.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.analytic_s, a.order, a.local, a.dims) < std::tie(b.analytic_s, b.order, b.local, b.dims);
  });
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace exasim::place
