#include "sim/flow/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace exasim::flow {

FlowNetwork::FlowNetwork(const std::vector<topo::Link>& links, bool full_resolve)
    : links_(links.size()), full_resolve_(full_resolve) {
  for (std::size_t l = 0; l < links.size(); ++l) links_[l].capacity = links[l].bandwidth_Bps;
}

void FlowNetwork::EntryList::push_back(Entry e) {
  if (size_ < kInline) {
    inline_[size_++] = e;
    return;
  }
  if (size_ == kInline) {  // spill: the inline entries move, in order
    if (!spill_) spill_ = std::make_unique<std::vector<Entry>>();
    spill_->assign(inline_, inline_ + kInline);
  }
  spill_->push_back(e);
  ++size_;
}

void FlowNetwork::EntryList::pop_back() {
  if (size_ > kInline) {
    spill_->pop_back();
    if (size_ == kInline + 1) std::copy_n(spill_->data(), kInline, inline_);  // back inside, in order
  }
  --size_;
}

void FlowNetwork::hold(const topo::LinkId* links, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) ++links_[links[i]].held;
}

FlowId FlowNetwork::take_slot(std::size_t hops) {
  std::uint8_t size_class = 0;
  while ((std::size_t{kMinSegment} << size_class) < hops) ++size_class;
  if (size_class >= free_slots_.size()) free_slots_.resize(size_class + 1);
  auto& free = free_slots_[size_class];
  if (!free.empty()) {
    const FlowId id = free.back();
    free.pop_back();
    return id;
  }
  const std::size_t segment = std::size_t{kMinSegment} << size_class;
  if (route_pool_.size() + segment > 0xffffffffu) throw std::length_error("FlowNetwork: route pool full");
  const auto id = static_cast<FlowId>(flows_.size());
  flows_.emplace_back();
  flows_[id].route_at = static_cast<std::uint32_t>(route_pool_.size());
  flows_[id].size_class = size_class;
  route_pool_.resize(route_pool_.size() + segment);
  return id;
}

FlowId FlowNetwork::add(const std::vector<topo::LinkId>& route, double bytes, std::uint64_t tag) {
  if (route.empty()) throw std::logic_error("FlowNetwork::add: empty route");
  const FlowId id = take_slot(route.size());
  Flow& f = flows_[id];
  f.remaining = bytes;
  f.rate = 0;
  f.updated_s = 0;
  f.tag = tag;
  ++f.version;
  f.hops = static_cast<std::uint32_t>(route.size());
  f.active = true;
  ++active_;
  const std::size_t base = f.route_at;
  for (std::uint32_t i = 0; i < f.hops; ++i) {
    const topo::LinkId l = route[i];
    LinkState& link = links_[l];
    if (link.held > 0) --link.held;
    auto& on_link = link.entries;
    route_pool_[base + i] = {l, static_cast<std::uint32_t>(on_link.size())};
    // A link a bundle crosses k times is marked dirty once, not k times.
    if (on_link.empty() || on_link.back().flow != id) dirty_links_.push_back(l);
    on_link.push_back({id, i});
  }
  return id;
}

std::uint64_t FlowNetwork::finish(FlowId id) {
  Flow& f = flows_[id];
  const std::size_t base = f.route_at;
  for (std::uint32_t i = 0; i < f.hops; ++i) {
    const auto [l, pos] = route_pool_[base + i];
    auto& on_link = links_[l].entries;
    // Swap-remove: the last entry of the list takes this entry's place; fix that entry's back index.
    const Entry moved = on_link.back();
    on_link[pos] = moved;
    on_link.pop_back();
    route_pool_[flows_[moved.flow].route_at + moved.hop].index = pos;
    dirty_links_.push_back(l);
  }
  f.active = false;
  ++f.version;
  --active_;
  free_slots_[f.size_class].push_back(id);
  return f.tag;
}

void FlowNetwork::collect_components() {
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  components_.clear();
  std::vector<topo::LinkId>& seeds = dirty_links_;
  if (full_resolve_) {
    seeds.clear();
    for (topo::LinkId l = 0; l < links_.size(); ++l)
      if (!links_[l].entries.empty()) seeds.push_back(l);
  }
  // Depth-first over links <-> flows from each dirty link not reached yet: one component at a time,
  // so that each is filled on its own (a small heap, or none for a lone flow).
  for (topo::LinkId seed : seeds) {
    if (links_[seed].epoch == epoch_ || links_[seed].entries.empty()) continue;
    Component c{comp_links_.size(), comp_flows_.size()};
    stack_.push_back(seed);
    links_[seed].epoch = epoch_;
    while (!stack_.empty()) {
      const topo::LinkId l = stack_.back();
      stack_.pop_back();
      comp_links_.push_back(l);
      for (const Entry& e : links_[l].entries) {
        Flow& flow = flows_[e.flow];
        if (flow.epoch == epoch_) continue;
        flow.epoch = epoch_;
        comp_flows_.push_back(e.flow);
        const RouteEntry* route = route_of(e.flow);
        for (std::size_t i = 0; i < flow.hops; ++i) {
          LinkState& next = links_[route[i].link];
          if (next.epoch == epoch_) continue;
          next.epoch = epoch_;
          stack_.push_back(route[i].link);
        }
      }
    }
    components_.push_back(c);
  }
  seeds.clear();
}

void FlowNetwork::fill_components() {
  const std::uint32_t frozen_mark = epoch_ + 1;  // flows of this resolve carry epoch_ until frozen
  for (std::size_t c = 0; c < components_.size(); ++c) {
    const std::size_t links_end = c + 1 < components_.size() ? components_[c + 1].links_at : comp_links_.size();
    const std::size_t flows_end = c + 1 < components_.size() ? components_[c + 1].flows_at : comp_flows_.size();
    if (flows_end - components_[c].flows_at == 1) {
      // A lone flow: every entry on its links is its own, so its rate is the tightest capacity over
      // its multiplicity there, exactly what progressive filling would freeze it at.
      Flow& flow = flows_[comp_flows_[components_[c].flows_at]];
      double rate = std::numeric_limits<double>::infinity();
      for (std::size_t i = components_[c].links_at; i < links_end; ++i) {
        const topo::LinkId l = comp_links_[i];
        rate = std::min(rate, links_[l].capacity / static_cast<double>(links_[l].entries.size()));
      }
      flow.new_rate = std::max(0.0, rate);
      flow.epoch = frozen_mark;
      continue;
    }
    fill(components_[c].links_at, links_end, frozen_mark);
  }
  ++epoch_;  // the frozen mark is now spent; the next collect starts above it
}

void FlowNetwork::fill(std::size_t links_at, std::size_t links_end, std::uint32_t frozen_mark) {
  // Progressive filling: repeatedly saturate the link with the smallest fair share and freeze its flows.
  // Freezing a flow at the smallest share s never lowers another link's share ((R - m s) / (n - m) >= R / n
  // when s <= R / n, for a flow with m entries on that link), so heap keys may lag behind and are
  // refreshed lazily when popped: one push per pop instead of one per flow and link frozen. Links pop
  // in the same (share, link) order either way.
  heap_.clear();
  for (std::size_t i = links_at; i < links_end; ++i) {
    const topo::LinkId l = comp_links_[i];
    LinkState& link = links_[l];
    link.residual = link.capacity;
    link.unfrozen = static_cast<std::uint32_t>(link.entries.size());
    heap_.push_back({link.residual / link.unfrozen, l});
  }
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
    for (const Entry& e : link.entries) {
      Flow& flow = flows_[e.flow];
      if (flow.epoch == frozen_mark) continue;
      flow.epoch = frozen_mark;
      flow.new_rate = share;
      const RouteEntry* route = route_of(e.flow);
      for (std::size_t i = 0; i < flow.hops; ++i) {
        LinkState& l2 = links_[route[i].link];
        l2.residual -= share;
        --l2.unfrozen;
      }
    }
  }
}

void FlowNetwork::resolve(double now_s, const Scheduler& schedule) {
  if (dirty_links_.empty() && !full_resolve_) return;
  collect_components();
  if (comp_flows_.empty()) return;
  fill_components();
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
