#include "sim/flow/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace exasim::flow {

FlowNetwork::FlowNetwork(const std::vector<topo::Link>& links, bool full_resolve)
    : link_flows_(links.size()), full_resolve_(full_resolve), link_epoch_(links.size(), 0),
      residual_(links.size(), 0), unfrozen_(links.size(), 0), share_version_(links.size(), 0) {
  capacity_.reserve(links.size());
  for (const auto& l : links) capacity_.push_back(l.bandwidth_Bps);
}

void FlowNetwork::mark_dirty(topo::LinkId link) { dirty_links_.push_back(link); }

FlowId FlowNetwork::add(const std::vector<topo::LinkId>& route, double bytes, std::uint64_t tag) {
  if (route.empty()) throw std::logic_error("FlowNetwork::add: empty route");
  FlowId id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    flow_epoch_.push_back(0);
    new_rate_.push_back(0);
  }
  Flow& f = flows_[id];
  f.links.assign(route.begin(), route.end());
  f.remaining = bytes;
  f.rate = 0;
  f.updated_s = 0;
  f.tag = tag;
  ++f.version;
  f.active = true;
  ++active_;
  for (auto l : f.links) {
    link_flows_[l].push_back(id);
    mark_dirty(l);
  }
  return id;
}

std::uint64_t FlowNetwork::finish(FlowId id) {
  Flow& f = flows_[id];
  for (auto l : f.links) {
    auto& on_link = link_flows_[l];
    auto it = std::find(on_link.begin(), on_link.end(), id);
    *it = on_link.back();
    on_link.pop_back();
    mark_dirty(l);
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
    if (link_epoch_[l] == epoch_) continue;
    link_epoch_[l] = epoch_;
    comp_links_.push_back(l);
    for (FlowId f : link_flows_[l]) {
      if (flow_epoch_[f] == epoch_) continue;
      flow_epoch_[f] = epoch_;
      comp_flows_.push_back(f);
      for (auto l2 : flows_[f].links)
        if (link_epoch_[l2] != epoch_) stack.push_back(l2);
    }
  }
}

void FlowNetwork::fill_component() {
  // Progressive filling: repeatedly saturate the link with the smallest fair share and freeze its flows.
  heap_.clear();
  for (auto l : comp_links_) {
    residual_[l] = capacity_[l];
    unfrozen_[l] = static_cast<std::uint32_t>(link_flows_[l].size());
    if (unfrozen_[l] > 0) heap_.push_back({residual_[l] / unfrozen_[l], l, ++share_version_[l]});
  }
  const std::uint32_t frozen_mark = epoch_ + 1;  // flows of this component carry epoch_ until frozen
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    Share top = heap_.back();
    heap_.pop_back();
    if (top.version != share_version_[top.link] || unfrozen_[top.link] == 0) continue;
    double share = std::max(0.0, residual_[top.link] / unfrozen_[top.link]);
    for (FlowId f : link_flows_[top.link]) {
      if (flow_epoch_[f] == frozen_mark) continue;
      flow_epoch_[f] = frozen_mark;
      new_rate_[f] = share;
      for (auto l2 : flows_[f].links) {
        residual_[l2] -= share;
        if (--unfrozen_[l2] > 0 && l2 != top.link) {
          heap_.push_back({std::max(0.0, residual_[l2]) / unfrozen_[l2], l2, ++share_version_[l2]});
          std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
        }
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
  for (FlowId id : comp_flows_) {
    Flow& f = flows_[id];
    double rate = new_rate_[id];
    if (rate == f.rate) continue;  // unchanged: the scheduled completion still holds
    f.remaining = std::max(0.0, f.remaining - f.rate * (now_s - f.updated_s));
    f.updated_s = now_s;
    f.rate = rate;
    ++f.version;
    if (rate > 0) schedule(now_s + f.remaining / rate, id, f.version);
  }
}

}  // namespace exasim::flow
