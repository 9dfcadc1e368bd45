#include "sim/flow/internal/components_solver.hpp"

#include <algorithm>
#include <functional>
#include <limits>

namespace exasim::flow {

void ComponentsSolver::solve(NetworkState& s) {
  ++s.epoch_;
  const std::uint32_t frozen_mark = s.epoch_ + 1;  // paths of this resolve carry epoch_ until frozen
  s.comp_paths_.clear();
  std::vector<topo::LinkId>& seeds = s.dirty_links_;
  if (every_link_) {
    seeds.clear();
    for (topo::LinkId l = 0; l < s.links_.size(); ++l)
      if (!s.links_[l].entries.empty()) seeds.push_back(l);
  }
  // Depth-first over links <-> paths from each dirty link not reached yet: one component at a time,
  // filled as soon as it is collected. Seeds are taken newest first: the links touched last are the
  // ones still in cache (the order of components does not change any rate). The search steps over
  // lone links (a path's only ones) without reading them, so they carry no mark: a lone seed is done
  // when its path is. Each shared link gets its filling scratch and heap key as it is reached, while
  // its record is in cache; each path with lone links, one key for the tightest (see fill()).
  for (auto it = seeds.rbegin(); it != seeds.rend(); ++it) {
    const topo::LinkId seed = *it;
    const EntryList& seed_entries = s.links_[seed].entries;
    if (s.links_[seed].epoch == s.epoch_ || seed_entries.empty()) continue;
    if (seed_entries.size() == 1 && s.paths_[seed_entries.back(s.spills_).path].epoch >= s.epoch_) continue;
    const std::size_t paths_at = s.comp_paths_.size();
    heap_.clear();
    stack_.push_back(seed);
    s.links_[seed].epoch = s.epoch_;
    while (!stack_.empty()) {
      const topo::LinkId l = stack_.back();
      stack_.pop_back();
      const LinkState& link = s.links_[l];
      if (link.entries.size() > 1 || every_link_) {  // else a lone seed
        s.scratch_[l].residual = s.capacity(l);
        s.scratch_[l].unfrozen = link.flows;
        heap_.push_back({s.scratch_[l].residual / link.flows, l});
      }
      for (const Entry* at = link.entries.begin(s.spills_); at != link.entries.end(s.spills_); ++at) {
        const Entry& e = *at;
        Path& path = s.paths_[e.path];
        if (path.epoch == s.epoch_) continue;
        path.epoch = s.epoch_;
        s.comp_paths_.push_back(e.path);
        s.counters_.route_entries += path.hops;
        Share tightest{std::numeric_limits<double>::infinity(), kNoId, e.path};
        const double flows = path.flows;
        const RouteEntry* route = s.route_of(e.path);
        for (std::size_t i = 0; i < path.hops; ++i) {
          const RouteEntry& r = route[i];
          if (r.lone) {
            const Share key{s.capacity(r) / flows, r.link, e.path};
            if (tightest > key) tightest = key;
            continue;
          }
          LinkState& next = s.links_[r.link];
          if (next.epoch == s.epoch_) continue;
          next.epoch = s.epoch_;
          stack_.push_back(r.link);
        }
        if (tightest.link != kNoId) heap_.push_back(tightest);
      }
    }
    if (s.comp_paths_.size() - paths_at == 1) {
      // A lone path: every entry on its links is its own, so its flows' rate is the tightest capacity
      // over the flow entries there, exactly what progressive filling would freeze them at.
      Path& path = s.paths_[s.comp_paths_[paths_at]];
      double rate = std::numeric_limits<double>::infinity();
      for (const Share& key : heap_) rate = std::min(rate, key.share);
      path.new_rate = std::max(0.0, rate);
      path.epoch = frozen_mark;
    } else {
      fill(s, s.comp_paths_.size() - paths_at, frozen_mark);
    }
  }
  seeds.clear();
  ++s.epoch_;  // the frozen mark is now spent; the next resolve starts above it
}

void ComponentsSolver::fill(NetworkState& s, std::size_t paths, std::uint32_t frozen_mark) {
  // Progressive filling: repeatedly saturate the link with the smallest fair share and freeze its flows.
  // Freezing a flow at the smallest share s never lowers another link's share ((R - m s) / (n - m) >= R / n
  // when s <= R / n, for a flow with m entries on that link), so heap keys may lag behind and are
  // refreshed lazily when popped: one push per pop instead of one per flow and link frozen. Links pop
  // in the same (share, link) order either way.
  //
  // A lone link's share stays its capacity over its path's flows until that path freezes, and then it
  // has no unfrozen entry left: of a path's lone links only the tightest can ever freeze anything. So
  // the heap holds the component's shared links and one key per path for its tightest lone link, and
  // freezing a path leaves its lone links' scratch alone (nothing reads it).
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  // Once every path is frozen the rest of the heap can change nothing: stop there (the reference solver
  // empties it). In a big component (data-parallel bundles over hundreds of nodes) that is after a few
  // percent of its links.
  std::size_t unfrozen_paths = paths;
  const auto freeze = [&](PathId id, double share) {
    --unfrozen_paths;
    Path& path = s.paths_[id];
    path.epoch = frozen_mark;
    path.new_rate = share;
    const RouteEntry* route = s.route_of(id);
    for (std::size_t i = 0; i < path.hops; ++i) {
      if (route[i].lone) continue;
      FillScratch& link = s.scratch_[route[i].link];
      // One subtraction per flow, not share * flows: the same sums as if each flow were its own path.
      for (std::uint32_t k = 0; k < path.flows; ++k) link.residual -= share;
      link.unfrozen -= path.flows;
    }
  };
  while (!heap_.empty() && (unfrozen_paths > 0 || every_link_)) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Share top = heap_.back();
    heap_.pop_back();
    if (top.path != kNoId) {  // a path's tightest lone link
      if (s.paths_[top.path].epoch != frozen_mark) freeze(top.path, top.share);
      continue;
    }
    const FillScratch& link = s.scratch_[top.link];
    if (link.unfrozen == 0) continue;
    const double share = std::max(0.0, link.residual / link.unfrozen);
    if (share > top.share) {  // stale key: back in with the current share
      heap_.push_back({share, top.link});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
      continue;
    }
    const EntryList& entries = s.links_[top.link].entries;
    for (const Entry* it = entries.begin(s.spills_); it != entries.end(s.spills_); ++it)
      if (s.paths_[it->path].epoch != frozen_mark) freeze(it->path, share);
  }
}

}  // namespace exasim::flow
