#include "sim/flow/node_flows.hpp"
#include "sim/flow/internal/sort_ids.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

namespace exasim::flow {

NodeFlows::NodeFlows(std::uint32_t nodes, std::uint32_t per_node, std::vector<double> capacities)
    : nodes_(nodes),
      per_node_(per_node),
      per_node_div_(per_node),
      local_links_(static_cast<std::uint32_t>(capacities.size())),
      capacities_(std::move(capacities)),
      head_(nodes, kNoId),
      dirty_(nodes, 0) {
  if (local_links_ > kMaxLinksPerNode || local_links_ > per_node_)
    throw std::invalid_argument("NodeFlows: a node has more local links than a path's link mask holds");
}

bool NodeFlows::takes(std::span<const topo::LinkId> route) const {
  if (route.empty() || !is_local(route[0])) return false;
  const std::uint32_t node = route[0] / per_node_;
  for (const topo::LinkId l : route)
    if (!is_local(l) || l / per_node_ != node) return false;
  return true;
}

void NodeFlows::mark(std::uint32_t node) {
  if (dirty_[node]) return;
  dirty_[node] = 1;
  dirty_nodes_.push_back(node);
}

FlowId NodeFlows::add(std::span<const topo::LinkId> route, double bytes, std::uint64_t tag) {
  if (route.size() > kMaxHops)
    throw std::logic_error("NodeFlows::add: a route inside a node with " + std::to_string(route.size()) +
                           " links (at most " + std::to_string(kMaxHops) + ")");
  const std::uint32_t node = route[0] / per_node_;
  const topo::LinkId base = node * per_node_;
  Path wanted;
  wanted.hops = static_cast<std::uint8_t>(route.size());
  for (std::size_t i = 0; i < route.size(); ++i) {
    wanted.route[i] = static_cast<std::uint8_t>(route[i] - base);
    wanted.mask |= std::uint64_t{1} << wanted.route[i];
  }
  // Flows on exactly the same route share one path, as in FlowNetwork.
  std::uint32_t path = head_[node];
  while (path != kNoId &&
         (paths_[path].hops != wanted.hops || std::memcmp(paths_[path].route, wanted.route, wanted.hops) != 0))
    path = paths_[path].next;
  if (path == kNoId) {
    if (!free_paths_.empty()) {
      path = free_paths_.back();
      free_paths_.pop_back();
    } else {
      if (paths_.size() >= kNoId) throw std::length_error("NodeFlows: too many paths");
      path = static_cast<std::uint32_t>(paths_.size());
      paths_.emplace_back();
    }
    wanted.next = head_[node];
    paths_[path] = wanted;
    head_[node] = path;
    ++active_paths_;
  }
  FlowId id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    if (flows_.size() >= kMaxFlows) throw std::length_error("NodeFlows: too many flows");
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  Path& p = paths_[path];
  Flow& f = flows_[id];
  f = Flow{bytes, 0, 0, tag, path, node, kNoId, p.first};
  if (p.first != kNoId) flows_[p.first].prev = id;
  p.first = id;
  ++p.flows;
  ++active_;
  mark(node);
  return id;
}

std::uint64_t NodeFlows::finish(FlowId id) {
  Flow& f = flows_[id];
  Path& p = paths_[f.path];
  if (f.prev != kNoId)
    flows_[f.prev].next = f.next;
  else
    p.first = f.next;
  if (f.next != kNoId) flows_[f.next].prev = f.prev;
  if (--p.flows == 0) {  // unlink the path from its node's list
    std::uint32_t* at = &head_[f.node];
    while (*at != f.path) at = &paths_[*at].next;
    *at = p.next;
    free_paths_.push_back(f.path);
    --active_paths_;
  }
  mark(f.node);
  --active_;
  free_flows_.push_back(id);
  return f.tag;
}

void NodeFlows::solve(std::uint32_t node) {
  // The node's link loads and residual capacities, rebuilt from its paths: nothing per link persists.
  std::array<std::uint32_t, kMaxLinksPerNode> unfrozen{};
  std::array<double, kMaxLinksPerNode> residual;
  std::uint64_t used = 0;
  std::uint64_t shared = 0;  // links that more than one path crosses
  std::uint32_t count = 0;
  for (std::uint32_t p = head_[node]; p != kNoId; p = paths_[p].next) {
    const Path& path = paths_[p];
    for (std::uint32_t i = 0; i < path.hops; ++i) unfrozen[path.route[i]] += path.flows;
    shared |= used & path.mask;
    used |= path.mask;
    ++count;
  }
  if (shared == 0) {
    // Every path is alone on its links (rings of different dimensions use different GPU pairs): each
    // gets NetworkState::lone_rate(), the tightest capacity over the flow entries on its links, which
    // is what progressive filling would freeze it at.
    for (std::uint32_t p = head_[node]; p != kNoId; p = paths_[p].next) {
      Path& path = paths_[p];
      double rate = std::numeric_limits<double>::infinity();
      for (std::uint32_t i = 0; i < path.hops; ++i) {
        const std::uint8_t l = path.route[i];
        rate = std::min(rate, capacities_[l] / static_cast<double>(unfrozen[l]));
      }
      path.rate = std::max(0.0, rate);
    }
    return;
  }
  // Progressive filling as in ComponentsSolver::fill(), over the node's links in local order (the order of
  // their global ids): the same lazily refreshed heap of (share, link), the same subtractions.
  struct Share {
    double share;
    std::uint32_t link;
    bool operator>(const Share& o) const { return share > o.share || (share == o.share && link > o.link); }
  };
  std::array<Share, kMaxLinksPerNode> heap;
  std::size_t size = 0;
  for (std::uint64_t rest = used; rest != 0; rest &= rest - 1) {
    const auto l = static_cast<std::uint32_t>(__builtin_ctzll(rest));
    residual[l] = capacities_[l];
    heap[size++] = {residual[l] / unfrozen[l], l};
  }
  frozen_.assign(count, 0);  // per path of the node, in list order
  std::make_heap(heap.begin(), heap.begin() + size, std::greater<>());
  while (size > 0) {
    std::pop_heap(heap.begin(), heap.begin() + size, std::greater<>());
    const Share top = heap[--size];
    if (unfrozen[top.link] == 0) continue;
    const double share = std::max(0.0, residual[top.link] / unfrozen[top.link]);
    if (share > top.share) {
      heap[size++] = {share, top.link};
      std::push_heap(heap.begin(), heap.begin() + size, std::greater<>());
      continue;
    }
    std::uint32_t k = 0;
    for (std::uint32_t p = head_[node]; p != kNoId; p = paths_[p].next, ++k) {
      Path& path = paths_[p];
      if (!(path.mask >> top.link & 1) || frozen_[k]) continue;
      frozen_[k] = 1;
      path.rate = share;
      for (std::uint32_t i = 0; i < path.hops; ++i) {
        const std::uint8_t l = path.route[i];
        for (std::uint32_t n = 0; n < path.flows; ++n) residual[l] -= share;
        unfrozen[l] -= path.flows;
      }
    }
  }
}

void NodeFlows::resolve(double now_s, const Scheduler& schedule) {
  if (dirty_nodes_.empty()) return;
  changed_.clear();
  for (const std::uint32_t node : dirty_nodes_) {
    dirty_[node] = 0;
    solve(node);
    for (std::uint32_t p = head_[node]; p != kNoId; p = paths_[p].next)
      for (FlowId id = paths_[p].first; id != kNoId; id = flows_[id].next)
        if (flows_[id].rate != paths_[p].rate) changed_.push_back(id);  // else its prediction still holds
  }
  dirty_nodes_.clear();
  // In flow id order, as FlowNetwork does: independent of the order in which nodes were touched.
  sort_ids(changed_, sort_scratch_);
  for (const FlowId id : changed_) change_rate(flows_[id], id, paths_[flows_[id].path].rate, now_s, schedule);
}

}  // namespace exasim::flow
