#include "sim/flow/internal/network_state.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace exasim::flow {

NetworkState::NetworkState(const std::vector<topo::Link>& links, SolverFeatures features)
    : keeps_link_loads_(features.keeps_link_loads),
      records_bottlenecks_(features.records_bottlenecks),
      tracks_touched_paths_(features.tracks_touched_paths),
      marks_lone_entries_(features.marks_lone_entries),
      sleeps_links_(features.sleeps_links),
      takes_shortcuts_(features.takes_shortcuts),
      links_(links.size()),
      loads_(links.size()),
      scratch_(links.size()) {
  std::unordered_map<double, std::uint32_t> classes;  // machines have a handful of distinct capacities
  for (std::size_t l = 0; l < links.size(); ++l) {
    auto [it, added] = classes.try_emplace(links[l].bandwidth_Bps, static_cast<std::uint32_t>(capacities_.size()));
    if (added) capacities_.push_back(links[l].bandwidth_Bps);
    if (capacities_.size() > kMaxCapacityClasses)
      throw std::invalid_argument("FlowNetwork: more than " + std::to_string(kMaxCapacityClasses) +
                                  " distinct link capacities");
    links_[l].capacity_class = static_cast<std::uint16_t>(it->second);
  }
  allowance_class_.assign(std::max<std::size_t>(capacities_.size(), kClassInLink + 1), 0);
  class_room_.assign(capacities_.size(), 0);
  sleep_class_.assign(std::size_t{kClassInLink} * kRoomSizes, kNoSleepClass);
}

bool NetworkState::try_sleep(topo::LinkId l) {
  // Room for one flow more than it has (a new path's first flow is counted after new_path()), to
  // the next power of two. A wider room wakes fewer links on their next flow but more on their
  // allowance: room for twice as many took 1.03x the time under minimal routing.
  const std::uint32_t base = links_[l].capacity_class;
  if (base >= kClassInLink || links_[l].holds_bottleneck) return false;
  const std::uint32_t room = std::bit_ceil(links_[l].flows + 1);
  const double allowance = capacities_[base] / room;
  const EntryList& entries = links_[l].entries;
  for (const Entry* e = entries.begin(spills_); e != entries.end(spills_); ++e)
    if (!(paths_[e->path].new_rate <= allowance)) return false;
  std::uint16_t& cls = sleep_class_[base * kRoomSizes + static_cast<std::uint32_t>(std::countr_zero(room))];
  if (cls == kNoSleepClass) {
    if (capacities_.size() >= kClassInLink) return false;  // no class left: stays awake
    cls = static_cast<std::uint16_t>(capacities_.size());
    capacities_.push_back(allowance);
    allowance_class_[cls] = 1;
    class_room_.push_back(room);
  }
  links_[l].asleep = cls;
  for (const Entry* e = entries.begin(spills_); e != entries.end(spills_); ++e) set_lone(*e, true);
  ++counters_.sleeps;
  return true;
}

void NetworkState::wake(topo::LinkId l) {
  ++counters_.wakes;
  LinkState& link = links_[l];
  link.asleep = kAwake;
  std::int64_t load = 0;
  for (const Entry* e = link.entries.begin(spills_); e != link.entries.end(spills_); ++e) {
    set_lone(*e, false);
    load += std::int64_t{paths_[e->path].flows} * quantum_of(paths_[e->path].new_rate);
  }
  scratch_[l].load = load;
}

namespace {
/// The newest freed id (flow, path or link entry segment) of a size class, if any (reused newest
/// first: its records are the likeliest still in cache).
bool reuse(std::vector<std::vector<std::uint32_t>>& free_lists, std::uint8_t size_class, std::uint32_t& id) {
  if (size_class >= free_lists.size()) free_lists.resize(size_class + 1);
  auto& free = free_lists[size_class];
  if (free.empty()) return false;
  id = free.back();
  free.pop_back();
  return true;
}
}  // namespace

std::uint32_t NetworkState::SpillPool::take(std::uint8_t log2) {
  if (std::uint32_t at; reuse(free, log2, at)) return at;
  const std::size_t at = arena.size();
  if (at + (std::size_t{1} << log2) >= kNoId) throw std::length_error("FlowNetwork: link entry pool full");
  arena.resize(at + (std::size_t{1} << log2));
  return static_cast<std::uint32_t>(at);
}

void NetworkState::EntryList::push_back_growing(SpillPool& pool, Entry e) {
  if (size_ == kMaxSize) throw std::length_error("FlowNetwork: too many paths on one link");
  if (size_ == 1) {  // spill: the inline entry moves first
    if (spill_ == kNoId) {
      log2_ = 2;
      spill_ = pool.take(log2_);
    }
    pool.arena[spill_] = inline_;
  } else if (size_ == (1u << log2_)) {  // segment full: move to one twice the size
    const std::uint32_t grown = pool.take(log2_ + 1);
    std::copy_n(pool.arena.begin() + spill_, size_, pool.arena.begin() + grown);
    pool.free[log2_].push_back(spill_);
    spill_ = grown;
    ++log2_;
  }
  pool.arena[spill_ + size_] = e;
  ++size_;
}

void NetworkState::EntryList::pop_back(SpillPool& pool) {
  if (size_ == 2) inline_ = pool.arena[spill_];  // back inside
  --size_;
}

std::uint8_t NetworkState::size_class_of(std::size_t hops) {
  std::uint8_t size_class = 0;
  while ((std::size_t{kMinSegment} << size_class) < hops) ++size_class;
  return size_class;
}

FlowId NetworkState::take_flow(std::size_t hops) {
  // Flow ids are reused per route size class: the ids, and so the order of predictions at equal
  // times, then follow the launch history alone, and flows of one kind (node-local rings, network
  // rings, data-parallel rings) keep reusing their own records. One free list for all gave the same
  // answers but took 1.10x the wall time at 32k GCDs (6 alternating rounds, every one slower).
  const std::uint8_t size_class = size_class_of(hops);
  if (FlowId id; reuse(free_flows_, size_class, id)) return id;
  if (flows_.size() >= kNodeLocal) throw std::length_error("FlowNetwork: too many flows");
  flows_.emplace_back();
  flows_.back().size_class = size_class;
  return static_cast<FlowId>(flows_.size() - 1);
}

NetworkState::PathId NetworkState::take_path(std::size_t hops) {
  const std::uint8_t size_class = size_class_of(hops);
  if (PathId id; reuse(free_paths_, size_class, id)) return id;
  const std::size_t segment = std::size_t{kMinSegment} << size_class;
  if (route_pool_.size() + segment > 0xffffffffu) throw std::length_error("FlowNetwork: route pool full");
  const auto id = static_cast<PathId>(paths_.size());
  paths_.emplace_back();
  // The pool ends in kPrefetchAhead spare entries, so that enter_region() may read ahead of the
  // last segment's route without testing for its end.
  if (route_pool_.empty()) route_pool_.resize(kPrefetchAhead);
  paths_[id].route_at = static_cast<std::uint32_t>(route_pool_.size() - kPrefetchAhead);
  // find_path() relies on it: segments are multiples of kMinSegment, laid end to end from 0.
  if (paths_[id].route_at % kMinSegment != 0) throw std::logic_error("FlowNetwork: route segment misaligned");
  paths_[id].size_class = size_class;
  paths_[id].mask_at = static_cast<std::uint32_t>(masks_.size());
  masks_.resize(masks_.size() + mask_words(size_class));
  route_pool_.resize(route_pool_.size() + segment);
  return id;
}

NetworkState::PathId NetworkState::find_path(std::span<const topo::LinkId> route) const {
  // Only paths through the route's first link can match; it is usually a NIC or GPU link with few.
  const auto& candidates = links_[route[0]].entries;
  std::uint32_t tried = 0;
  for (const Entry* it = candidates.begin(spills_); it != candidates.end(spills_); ++it) {
    const Entry& e = *it;
    // Every route starts at a multiple of kMinSegment (take_path()): most later entries are passed
    // over without a read of their path's record.
    if (e.at % kMinSegment != 0) continue;
    const Path& p = paths_[e.path];
    if (e.at != p.route_at) continue;      // not the first entry of its route
    if (++tried > kPathCandidates) break;  // a miss only costs a second path with the same route
    if (p.hops != route.size()) continue;
    const RouteEntry* r = route_of(e.path);
    std::size_t i = 1;
    while (i < route.size() && r[i].link == route[i]) ++i;
    if (i == route.size()) return e.path;
  }
  return kNoId;
}

NetworkState::PathId NetworkState::new_path(std::span<const topo::LinkId> route, bool& alone) {
  const PathId id = take_path(route.size());
  Path& p = paths_[id];
  p.flows = 0;
  p.first = kNoId;
  p.lone_hop = kLoneStale;
  p.new_rate = 0;  // its flows count for nothing in the loads until it has a rate
  p.hops = static_cast<std::uint32_t>(route.size());
  ++active_paths_;
  const std::size_t base = p.route_at;
  std::uint64_t* mask = &masks_[p.mask_at];
  std::fill_n(mask, mask_words(p.size_class), std::uint64_t{0});
  alone = marks_lone_entries_;
  // The route is known: ask for its link records ahead (kPrefetchAhead).
  for (std::uint32_t i = 0; i < std::min(kPrefetchAhead, p.hops); ++i) __builtin_prefetch(&links_[route[i]]);
  for (std::uint32_t i = 0; i < p.hops; ++i) {
    // Clamped rather than tested (the test mispredicted once a route): the last ones repeat.
    __builtin_prefetch(&links_[route[std::min(i + kPrefetchAhead, p.hops - 1)]]);
    const topo::LinkId l = route[i];
    auto& on_link = links_[l].entries;
    for (const Entry* e = on_link.begin(spills_); alone && e != on_link.end(spills_); ++e) alone = e->path == id;
    if (on_link.size() == 1) {
      // The link stops being one path's alone: from now on its load is kept (see FillScratch::load),
      // unless it sleeps.
      const Entry& other = on_link.back(spills_);
      if (!(sleeping_ && try_sleep(l))) {
        set_lone(other, false);
        if (keeps_link_loads_)
          scratch_[l].load = std::int64_t{paths_[other.path].flows} * quantum_of(paths_[other.path].new_rate);
      }
    } else if (sleeping_ && on_link.size() > 1 && links_[l].asleep == kAwake) {
      (void)try_sleep(l);
    }
    const std::uint32_t cls = entry_class(l);
    const bool lone = marks_lone_entries_ && (on_link.empty() || links_[l].asleep != kAwake);
    route_pool_[base + i] = {l, on_link.size(), lone, cls};
    mask[i / 64] |= std::uint64_t{!lone} << (i % 64);
    on_link.push_back(spills_, {id, static_cast<std::uint32_t>(base + i)});
  }
  return id;
}

void NetworkState::set_mirrored(std::span<const std::pair<topo::LinkId, topo::LinkId>> pairs) {
  if (!takes_shortcuts_) throw std::logic_error("FlowNetwork::set_mirrored: the reference solver keeps every link");
  if (active_ > 0 || !mirror_balance_.empty())
    throw std::logic_error("FlowNetwork::set_mirrored: only once, before the first flow");
  if (pairs.size() >= kMirrorDown) throw std::length_error("FlowNetwork::set_mirrored: too many pairs");
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto [up, down] = pairs[i];
    if (up >= links_.size() || down >= links_.size() || !(up < down) || links_[up].mirror != kNoMirror ||
        links_[down].mirror != kNoMirror || capacity(up) != capacity(down))
      throw std::logic_error("FlowNetwork::set_mirrored: links " + std::to_string(up) + " and " + std::to_string(down) +
                             " are not a pair (distinct, up < down, each in one pair, same capacity)");
    links_[up].mirror = static_cast<std::uint32_t>(i);
    links_[down].mirror = static_cast<std::uint32_t>(i) | kMirrorDown;
  }
  mirror_balance_.assign(pairs.size(), 0);
}

std::span<const topo::LinkId> NetworkState::without_mirrored(std::span<const topo::LinkId> route,
                                                             std::uint64_t& dropped_holds) {
  unmirrored_route_.clear();
  mirror_touched_.clear();
  // A held down link (routing read it) is taken here, as add() takes the others: its hold leaves the load.
  const topo::LinkId held_from = holds_ > 0 ? first_held_ : kNoId;
  dropped_holds = 0;
  for (const topo::LinkId l : route) {
    const std::uint32_t m = links_[l].mirror;
    if (m == kNoMirror) {
      unmirrored_route_.push_back(l);
      continue;
    }
    const std::uint32_t pair = m & ~kMirrorDown;
    if (mirror_balance_[pair] == 0) mirror_touched_.push_back(pair);
    if (m & kMirrorDown) {
      --mirror_balance_[pair];
      if (l >= held_from) {
        --loads_[l];
        ++dropped_holds;
      }
    } else {
      ++mirror_balance_[pair];
      unmirrored_route_.push_back(l);
    }
  }
  bool balanced = true;
  for (const std::uint32_t pair : mirror_touched_) {
    balanced = balanced && mirror_balance_[pair] == 0;
    mirror_balance_[pair] = 0;
  }
  if (!balanced)
    throw std::logic_error(
        "FlowNetwork::add: a route crosses the two links of a mirrored pair unequally often (set_mirrored(): "
        "whoever chose the pairs missed a kind of traffic)");
  return unmirrored_route_;
}

FlowId NetworkState::add(std::span<const topo::LinkId> full_route, double bytes, std::uint64_t tag) {
  std::uint64_t taken_holds = 0;  // holds of the route's entries at or above first_held_ (see below)
  const std::span<const topo::LinkId> route =
      mirror_balance_.empty() ? full_route : without_mirrored(full_route, taken_holds);
  const FlowId id = take_flow(route.size());
  bool alone = false;
  PathId path = find_path(route);
  if (path == kNoId) path = new_path(route, alone);
  Path& p = paths_[path];
  Flow& f = flows_[id];
  f.remaining = bytes;
  f.rate = 0;
  f.updated_s = 0;
  f.tag = tag;
  f.path = path;
  f.prev = kNoId;
  f.next = p.first;
  if (p.first != kNoId) flows_[p.first].prev = id;
  p.first = id;
  ++p.flows;
  p.lone_hop = kLoneStale;
  ++active_;
  const std::int64_t load = keeps_link_loads_ ? quantum_of(p.new_rate) : 0;  // the new flow, at its path's rate so far
  const RouteEntry* entries = route_of(path);
  bool outgrown = false;  // a sleeping link with more flows than its room
  // With holds pending, the route is a bundle of held hops (hold()): its entries from first_held_ on
  // were held. Below it, the load grows.
  const topo::LinkId held_from = holds_ > 0 ? first_held_ : kNoId;
  for (std::size_t i = 0; i < route.size(); ++i) {
    const topo::LinkId l = route[i];
    LinkState& link = links_[l];
    // A held entry becomes a flow entry (the load stays); else the load grows. Without a branch:
    // routes mix held switch links and unheld NIC links in no pattern (3 % of adaptive runs'
    // mispredictions were here).
    const std::uint32_t taken = l >= held_from ? 1 : 0;
    taken_holds += taken;
    loads_[l] += 1 - taken;
    ++link.flows;
    outgrown = outgrown || (link.asleep != kAwake && link.flows > class_room_[link.asleep]);
    if (load != 0 && !entries[i].lone) scratch_[l].load += load;  // a new path's first flow counts for nothing yet
    // A link a bundle crosses k times is usually marked dirty k times; ComponentsSolver skips
    // links it has already reached.
    if (!alone) mark_dirty(l, link);
  }
  if (taken_holds > holds_)
    throw std::logic_error("FlowNetwork::add: a route takes " + std::to_string(taken_holds) + " holds, but only " +
                           std::to_string(holds_) + " are pending (a bundle must be made of held hops)");
  holds_ -= taken_holds;
  if (outgrown) {  // after the loop: the wake sums every entry, the new flow's included
    for (const topo::LinkId l : route)
      if (links_[l].asleep != kAwake && links_[l].flows > class_room_[links_[l].asleep]) wake(l);
  }
  if (alone) {
    // A new path with its links to itself: its rate is known now, while those links are in cache
    // (the closed form of ComponentsSolver::solve()). A later add() that shares one of them marks that
    // link dirty, and resolve() then solves the path in its component instead.
    topo::LinkId at = kNoId;
    const double rate = lone_rate(route.data(), route.data() + route.size(), &at);
    if (keeps_link_loads_) add_load(path, p.new_rate, rate);
    if (records_bottlenecks_) set_bottleneck(path, at);
    p.new_rate = rate;
    fresh_lone_.push_back(path);
  } else if (tracks_touched_paths_) {
    touched_paths_.push_back(path);
  }
  return id;
}

double NetworkState::lone_rate(const topo::LinkId* first, const topo::LinkId* last, topo::LinkId* at) const {
  double rate = std::numeric_limits<double>::infinity();
  for (const topo::LinkId* l = first; l != last; ++l) {
    const double share = capacity(*l) / static_cast<double>(links_[*l].flows);
    if (share < rate) {
      rate = share;
      *at = *l;
    }
  }
  return std::max(0.0, rate);
}

std::uint64_t NetworkState::finish(FlowId id) {
  Flow& f = flows_[id];
  Path& p = paths_[f.path];
  if (f.prev != kNoId)
    flows_[f.prev].next = f.next;
  else
    p.first = f.next;
  if (f.next != kNoId) flows_[f.next].prev = f.prev;
  const RouteEntry* route = route_of(f.path);
  const std::int64_t load = keeps_link_loads_ ? quantum_of(p.new_rate) : 0;
  for (std::uint32_t i = 0; i < std::min(kPrefetchAhead, p.hops); ++i) __builtin_prefetch(&links_[route[i].link]);
  if (p.flows == 1) {
    finish_path(f.path, load);
  } else {
    for (std::uint32_t i = 0; i < p.hops; ++i) {
      if (const std::uint32_t ahead = i + kPrefetchAhead; ahead < p.hops) {
        __builtin_prefetch(&links_[route[ahead].link]);
        if (load != 0 && !route[ahead].lone) __builtin_prefetch(&scratch_[route[ahead].link]);
      }
      LinkState& link = links_[route[i].link];
      --link.flows;
      --loads_[route[i].link];
      if (load != 0 && !route[i].lone) scratch_[route[i].link].load -= load;
      mark_dirty(route[i].link, link);
    }
    --p.flows;
    p.lone_hop = kLoneStale;
    if (tracks_touched_paths_) touched_paths_.push_back(f.path);
  }
  --active_;
  free_flows_[f.size_class].push_back(id);
  return f.tag;
}

void NetworkState::finish_path(PathId id, std::int64_t load) {
  // The flow's entries leave the links' counts and loads, and the path's entries leave the links'
  // lists, in one walk. An entry's lone mark can change under the walk (the path's own later entry
  // on a link it crosses twice becomes the link's only one): that entry's load then goes
  // unsubtracted, on a link left empty, whose load is set afresh when it is next shared.
  Path& p = paths_[id];
  const RouteEntry* route = route_of(id);
  for (std::uint32_t i = 0; i < p.hops; ++i) {
    // No test of the route's end (it mispredicted once a path): the pool ends in spare entries.
    const RouteEntry next = route[i + kPrefetchAhead];
    __builtin_prefetch(&links_[next.link]);
    if (load != 0 && !next.lone) __builtin_prefetch(&scratch_[next.link]);
    const RouteEntry r = route[i];  // as the removals before it left it
    LinkState& link = links_[r.link];
    --link.flows;
    --loads_[r.link];
    if (load != 0 && !r.lone) scratch_[r.link].load -= load;
    auto& on_link = link.entries;
    const Entry moved = on_link.back(spills_);
    on_link.at(spills_, r.index) = moved;
    on_link.pop_back(spills_);
    route_pool_[moved.at].index = r.index;
    if (on_link.size() <= 1) link.asleep = kAwake;  // one path left or none: not a sleeping link
    if (on_link.size() == 1 && marks_lone_entries_) set_lone(on_link.back(spills_), true);
    if (!on_link.empty()) mark_dirty(r.link, link);
    if (sleeping_ && on_link.size() > 1 && link.asleep == kAwake) (void)try_sleep(r.link);
  }
  p.flows = 0;
  set_bottleneck(id, kNoId);
  --active_paths_;
  free_paths_[p.size_class].push_back(id);
}

void NetworkState::add_load(PathId p, double old_rate, double new_rate) {
  const Path& path = paths_[p];
  const std::int64_t delta = static_cast<std::int64_t>(path.flows) * (quantum_of(new_rate) - quantum_of(old_rate));
  if (delta == 0) return;
  const RouteEntry* route = route_of(p);
  for_each_entry(p, false, [&](std::uint32_t i) { scratch_[route[i].link].load += delta; });
}

}  // namespace exasim::flow
