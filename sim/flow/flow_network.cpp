#include "sim/flow/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace exasim::flow {

FlowNetwork::FlowNetwork(const std::vector<topo::Link>& links, bool full_resolve)
    : links_(links.size()), link_flows_(links.size()), full_resolve_(full_resolve) {
  for (std::size_t l = 0; l < links.size(); ++l) links_[l].capacity = links[l].bandwidth_Bps;
}

void FlowNetwork::widen_routes(std::size_t hops) {
  const std::size_t wider = std::max(hops, 2 * stride_);
  std::vector<topo::LinkId> pool(flows_.size() * wider);
  std::vector<std::uint32_t> index(flows_.size() * wider);
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    std::copy_n(&route_pool_[f * stride_], flows_[f].hops, &pool[f * wider]);
    std::copy_n(&route_index_[f * stride_], flows_[f].hops, &index[f * wider]);
  }
  route_pool_.swap(pool);
  route_index_.swap(index);
  stride_ = wider;
}

FlowId FlowNetwork::add(const std::vector<topo::LinkId>& route, double bytes, std::uint64_t tag) {
  if (route.empty()) throw std::logic_error("FlowNetwork::add: empty route");
  if (route.size() > stride_) widen_routes(route.size());
  FlowId id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    route_pool_.resize(flows_.size() * stride_);
    route_index_.resize(flows_.size() * stride_);
  }
  Flow& f = flows_[id];
  f.remaining = bytes;
  f.rate = 0;
  f.updated_s = 0;
  f.tag = tag;
  ++f.version;
  f.hops = static_cast<std::uint16_t>(route.size());
  f.active = true;
  ++active_;
  const std::size_t base = std::size_t{id} * stride_;
  for (std::size_t i = 0; i < route.size(); ++i) {
    const topo::LinkId l = route[i];
    route_pool_[base + i] = l;
    route_index_[base + i] = static_cast<std::uint32_t>(link_flows_[l].size());
    link_flows_[l].push_back(id);
    dirty_links_.push_back(l);
  }
  return id;
}

std::uint64_t FlowNetwork::finish(FlowId id) {
  Flow& f = flows_[id];
  const std::size_t base = std::size_t{id} * stride_;
  for (std::size_t i = 0; i < f.hops; ++i) {
    const topo::LinkId l = route_pool_[base + i];
    auto& on_link = link_flows_[l];
    const std::uint32_t pos = route_index_[base + i];
    const auto last = static_cast<std::uint32_t>(on_link.size() - 1);
    // Swap-remove: the last flow of the list takes this flow's place; fix that flow's index for l.
    const FlowId moved = on_link[last];
    on_link[pos] = moved;
    on_link.pop_back();
    if (pos != last) {
      const std::size_t moved_base = std::size_t{moved} * stride_;
      for (std::size_t j = 0; j < flows_[moved].hops; ++j)
        if (route_pool_[moved_base + j] == l && route_index_[moved_base + j] == last) {
          route_index_[moved_base + j] = pos;
          break;
        }
    }
    dirty_links_.push_back(l);
  }
  f.active = false;
  ++f.version;
  --active_;
  free_flows_.push_back(id);
  return f.tag;
}

void FlowNetwork::collect_component() {
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  std::vector<topo::LinkId>& stack = dirty_links_;
  if (full_resolve_) {
    stack.clear();
    for (topo::LinkId l = 0; l < link_flows_.size(); ++l)
      if (!link_flows_[l].empty()) stack.push_back(l);
  }
  // Depth-first over links <-> flows, starting from the dirty links.
  while (!stack.empty()) {
    topo::LinkId l = stack.back();
    stack.pop_back();
    if (links_[l].epoch == epoch_) continue;
    links_[l].epoch = epoch_;
    comp_links_.push_back(l);
    for (FlowId f : link_flows_[l]) {
      Flow& flow = flows_[f];
      if (flow.epoch == epoch_) continue;
      flow.epoch = epoch_;
      comp_flows_.push_back(f);
      const topo::LinkId* route = route_of(f);
      for (std::size_t i = 0; i < flow.hops; ++i)
        if (links_[route[i]].epoch != epoch_) stack.push_back(route[i]);
    }
  }
}

void FlowNetwork::fill_component() {
  // Progressive filling: repeatedly saturate the link with the smallest fair share and freeze its flows.
  // Freezing a flow at the smallest share s never lowers another link's share ((R - s) / (n - 1) >= R / n
  // when s <= R / n), so heap keys may lag behind and are refreshed lazily when popped: one push per
  // pop instead of one per flow and link frozen. Links pop in the same (share, link) order either way.
  heap_.clear();
  for (auto l : comp_links_) {
    LinkState& link = links_[l];
    link.residual = link.capacity;
    link.unfrozen = static_cast<std::uint32_t>(link_flows_[l].size());
    if (link.unfrozen > 0) heap_.push_back({link.residual / link.unfrozen, l});
  }
  const std::uint32_t frozen_mark = epoch_ + 1;  // flows of this component carry epoch_ until frozen
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Share top = heap_.back();
    heap_.pop_back();
    LinkState& link = links_[top.link];
    if (link.unfrozen == 0) continue;
    const double share = std::max(0.0, link.residual / link.unfrozen);
    if (share > top.share) {  // stale key: back in with the current share
      heap_.push_back({share, top.link});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
      continue;
    }
    for (FlowId f : link_flows_[top.link]) {
      Flow& flow = flows_[f];
      if (flow.epoch == frozen_mark) continue;
      flow.epoch = frozen_mark;
      flow.new_rate = share;
      const topo::LinkId* route = route_of(f);
      for (std::size_t i = 0; i < flow.hops; ++i) {
        LinkState& l2 = links_[route[i]];
        l2.residual -= share;
        --l2.unfrozen;
      }
    }
  }
  ++epoch_;  // the frozen mark is now spent; the next collect starts above it
}

void FlowNetwork::resolve(double now_s, const Scheduler& schedule) {
  if (dirty_links_.empty() && !full_resolve_) return;
  collect_component();
  if (comp_flows_.empty()) return;
  fill_component();
  // Predictions go out in flow id order, not in the order the search met the flows (which differs
  // between the incremental and the full solver): completions at equal times are then handled in the
  // same order by both, and so are the launches they trigger, which adaptive routing is sensitive to.
  changed_.clear();
  for (FlowId id : comp_flows_)
    if (flows_[id].new_rate != flows_[id].rate) changed_.push_back(id);  // else its prediction still holds
  std::sort(changed_.begin(), changed_.end());
  for (FlowId id : changed_) {
    Flow& f = flows_[id];
    const double rate = f.new_rate;
    f.remaining = std::max(0.0, f.remaining - f.rate * (now_s - f.updated_s));
    f.updated_s = now_s;
    f.rate = rate;
    ++f.version;
    if (rate > 0) schedule(now_s + f.remaining / rate, id, f.version);
  }
}

}  // namespace exasim::flow
