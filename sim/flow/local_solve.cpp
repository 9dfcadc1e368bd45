// Solver::Local of FlowNetwork: progressive filling of only the paths whose rates can change.
//
// A path's rate changes only if its bottleneck does (the saturated link on which it is the fastest,
// recorded when it froze). So the filling starts with the paths whose flow count changed and those
// bottlenecked on a dirty link ("variable" paths); every other path is "held" at its rate, as fixed
// load on the links it crosses. The filling runs in level order, like progressive filling of the
// whole component would, over the "region": the links variable paths cross. Two events make a held
// path variable ("release" it), each at the level where the whole-component filling would have it:
//  - a region link saturates at level s while a held path on it runs faster than s: that path must
//    come down to s. It crosses no link saturated below s (there it would have been released
//    already), so moving its load from its rate to the level changes nothing already decided.
//  - the filling reaches the rate r of a held path bottlenecked on a region link while that link's
//    share is above r (its unfrozen variables will run faster than the path, which must rise with
//    them) or, with no unfrozen variable left, it has room left (it is no longer saturated). At level
//    r the path's load is the same either way.
// A released path's links join the region. When the heap is empty every path is frozen or held at a
// rate the filling has confirmed, and the rates are the max-min allocation, which is unique: the
// whole-component filling's, up to rounding (residuals are summed in another order).
//
// Keys in keys_ come out in level order (a radix queue: internal/radix_queue.hpp): a link's share (path = kNoId), a
// variable path's tightest lone link (path set), or a check of a held path at its rate (path | kCheck). A link's share
// can fall when a path is released onto it, though never below the current level (the released path's rate and the
// link's share both are at or above it), so releases push fresh keys; a key that pops above its link's share is then an
// old one, met once the link's share has risen back above it (or its variables have frozen), and is handled like any
// lagging key.

#include "sim/flow/internal/local_solver.hpp"

#include <algorithm>
#include <limits>

namespace exasim::flow {

namespace {
/// Relative tolerance of "faster than the level" and "room left": above the rounding of residual sums
/// (~1e-14), and far below the 1 ns instant over seconds of simulated time (rates off by 1e-9 moved
/// completions by ns and measurably changed adaptive runs; 1e-13 costs no measurable time).
constexpr double kTolerance = 1e-13;
/// Marks a key as the check of a held path (path ids stay below 2^29: each path holds at least
/// kMinSegment of the at most 2^32 route entries, see NetworkState::take_path()).
constexpr std::uint32_t kCheck = 0x80000000u;
/// FillScratch::keyed of a link waiting in deferred_keys_: below any share, so never "a key below it".
constexpr double kDeferred = -1;
/// std::popcount without a call into libgcc (the baseline x86-64 build has no popcnt instruction).
constexpr std::uint32_t bit_count(std::uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<std::uint32_t>((x * 0x0101010101010101ull) >> 56);
}
}  // namespace

void LocalSolver::join(PathId p) {
  NetworkState& s = *s_;
  if (s.paths_[p].in_set == in_set_) return;
  s.paths_[p].in_set = in_set_;
  s.comp_paths_.push_back(p);
}

void LocalSolver::solve(NetworkState& state) {
  s_ = &state;
  NetworkState& s = state;
  // Marks: epochs only grow, so ComponentsSolver never mistakes a mark of this solve for its own.
  s.comp_paths_.clear();
  keys_.clear();
  ++in_set_;
  for (const PathId p : s.touched_paths_)
    if (s.paths_[p].flows > 0) join(p);
  s.touched_paths_.clear();
  const std::uint32_t dirty_seen = ++s.epoch_;
  for (const topo::LinkId l : s.dirty_links_) {
    LinkState& link = s.links_[l];
    // Marked dirty only while some path's bottleneck was here, but those paths may have ended since.
    if (!link.holds_bottleneck || link.epoch == dirty_seen) continue;
    link.epoch = dirty_seen;
    for (const Entry* e = link.entries.begin(s.spills_); e != link.entries.end(s.spills_); ++e)
      if (s.paths_[e->path].bottleneck == l) join(e->path);
  }
  s.dirty_links_.clear();
  if (s.comp_paths_.empty()) return;
  unfrozen_mark_ = ++s.epoch_;
  frozen_mark_ = ++s.epoch_;
  region_mark_ = ++s.epoch_;
  for (const PathId p : s.comp_paths_) {  // all variable before any link counts them
    s.paths_[p].epoch = unfrozen_mark_;
    s.paths_[p].own_key = kNoId;
  }
  variables_left_ = static_cast<std::uint32_t>(s.comp_paths_.size());
  checks_pending_ = 0;
  // Each enters with its own key at once. A later one that makes a link shared leaves an earlier
  // one's own key there stale, which fill_local() finds when it pops (lazy own keys);
  // entering all first and then walking every route again for its key cost one more walk a path
  // (gpt-80b 4,096 spread: 0.973 of the wall time without it).
  defer_keys_ = true;
  for (const PathId p : s.comp_paths_) enter_region(p, 0.0);
  push_deferred_keys();
  const std::uint64_t released_before = s.counters_.paths_released;
  fill_local();
  if (s.sleep_mode_ == Sleeping::Auto) {
    // A running mean over about the last hundred re-solves, with hysteresis (kReleasedMeanWeight).
    released_mean_ +=
        kReleasedMeanWeight * (static_cast<double>(s.counters_.paths_released - released_before) - released_mean_);
    s.sleeping_ = released_mean_ > (s.sleeping_ ? kWakeBelow : kSleepAbove);
  }
}

void LocalSolver::wake_into_region(topo::LinkId l) {
  NetworkState& s = *s_;
  // As enter_region() would have entered it for each unfrozen variable path on it (paths frozen so
  // far count at their new rates in the load, held ones at theirs). No path is bottlenecked on a
  // link that slept, so there is no check to schedule.
  s.wake(l);
  FillScratch& sc = s.scratch_[l];
  open_region_link(sc, s.capacity(l));
  const EntryList& entries = s.links_[l].entries;
  for (const Entry* e = entries.begin(s.spills_); e != entries.end(s.spills_); ++e) {
    const Path& q = s.paths_[e->path];
    if (q.epoch != unfrozen_mark_) continue;
    sc.residual += NetworkState::quantized(q.new_rate) * q.flows;
    sc.unfrozen += q.flows;
    sc.owner = sc.owner == kNoId || sc.owner == e->path ? e->path : kShared;
  }
  if (sc.owner == kShared) {
    push_link_key(s, l, std::max(0.0, sc.residual) / sc.unfrozen);
  } else if (sc.owner != kNoId) {
    push_own_key(sc.owner);  // its own key counted the allowance here, not the link's share
  }
}

void LocalSolver::push_deferred_keys() {
  NetworkState& s = *s_;
  defer_keys_ = false;
  for (const topo::LinkId l : deferred_keys_) {
    const FillScratch& sc = s.scratch_[l];
    push_link_key(s, l, std::max(0.0, sc.residual) / sc.unfrozen);
  }
  deferred_keys_.clear();
}

void LocalSolver::consider_lone_links(Share& tightest, Path& path) {
  NetworkState& s = *s_;
  // A lone link's share is its capacity over the path's flows until the path freezes: only the
  // tightest matters. It stays the tightest until a lone mark or class on the route, or the path's
  // flows, change (NetworkState::set_lone(), add(), finish() mark it stale): re-solves enter a path
  // many times in between, and half the entries of adaptive routes are lone.
  const RouteEntry* route = s.route_of(tightest.path);
  const double flows = path.flows;
  if (path.lone_hop == kLoneStale) {
    // The least key of the lone entries alone: (share, link) orders keys totally, so comparing it
    // with `tightest` afterwards picks what comparing entry by entry would.
    Share least{std::numeric_limits<double>::infinity(), kNoId, tightest.path};
    std::uint32_t at = kNoLone;
    s.for_each_entry(tightest.path, true, [&](std::uint32_t i) {
      if (const Share key = s.lone_key(route[i], flows, tightest.path); least > key) {
        least = key;
        at = i;
      }
    });
    path.lone_hop = at;
  }
  if (path.lone_hop != kNoLone) consider_lone_link(s, tightest, route[path.lone_hop], flows);
}

void LocalSolver::enter_region(PathId p, double level) {
  NetworkState& s = *s_;
  // p's entries move from held load to unfrozen variables, entry by entry; a link new to the region
  // starts from its whole load (every entry at its rate, kept up to date in FillScratch::load, so the
  // link's entries need not be read) and gets a check per held path bottlenecked there. A link that
  // had one other unfrozen variable becomes shared: it gets a key of its own, and that path a new
  // tightest key if this link was its tightest. And p's own tightest key (push_own_key()).
  Path& path = s.paths_[p];
  s.counters_.route_entries += path.hops;
  const double held = NetworkState::quantized(path.new_rate);  // what each of its flows counts for in the loads
  // Read once: the stores to link records below could alias Path fields, for all the compiler knows.
  const std::uint32_t flows = path.flows;
  const double held_load = held * flows;
  Share tightest{std::numeric_limits<double>::infinity(), kNoId, p};
  const RouteEntry* route = s.route_of(p);
  // Inlined into both loops below (GCC left it a call, one per entry).
  const auto enter_shared = [&](const RouteEntry& r) __attribute__((always_inline)) {
    FillScratch& sc = s.scratch_[r.link];
    if (sc.region != region_mark_) {
      open_region_link(sc, s.capacity(r));
      if (sc.bottlenecked > 0) {
        const EntryList& entries = s.links_[r.link].entries;
        for (const Entry* e = entries.begin(s.spills_); e != entries.end(s.spills_); ++e) {
          const Path& q = s.paths_[e->path];
          if (q.epoch != unfrozen_mark_ && q.epoch != frozen_mark_ && q.bottleneck == r.link) {
            push_key({std::max(level, q.new_rate), r.link, e->path | kCheck});
            ++checks_pending_;
          }
        }
      }
    }
    const PathId other = sc.unfrozen == 0 ? kNoId : sc.owner;
    sc.residual += held_load;
    sc.unfrozen += flows;
    sc.owner = other == kNoId || other == p ? p : kShared;
    // A shared link's key lags behind a share that grew (popped, it goes back in); one that fell
    // needs a fresh key. One already waiting in deferred_keys_ needs nothing, not even its share.
    if (sc.owner == kShared) {
      if (sc.keyed != kDeferred) {
        const double share = std::max(0.0, sc.residual) / sc.unfrozen;
        if (other != kShared || share < sc.keyed) {
          if (defer_keys_) {
            sc.keyed = kDeferred;
            deferred_keys_.push_back(r.link);
          } else {
            push_link_key(s, r.link, share);
          }
        }
      }
    } else {
      // An own link (push_own_key()). On a link p crosses k times, the share after its j-th entry,
      // (R + j w h) / (j w), falls with j while R >= 0, so the last is the least and the earlier
      // ones cannot be the tightest. R < 0 (the path's old rate with its new flows overfills the
      // link) can make an earlier one the least and hide p's true tightest link: that key pops
      // early, finds the link's share higher, and push_own_key() looks again.
      const Share key{std::max(0.0, sc.residual) / sc.unfrozen, r.link, p};
      if (tightest > key) tightest = key;
    }
  };
  // Mostly shared routes (minimal routing: 92 % of entries) go entry by entry, the lone test then
  // predictable; routes with many lone entries (half of them under adaptive routing, in no pattern)
  // go through the shared-entry mask instead, a branch misprediction per lone entry fewer. Each way
  // measured slower on the other kind (docs/performance.md, "The local solver").
  std::uint32_t shared = 0;
  for (std::uint32_t w = 0; w * 64 < path.hops; ++w) shared += bit_count(s.masks_[path.mask_at + w]);
  if (8 * shared >= 7 * path.hops) {
    for (std::uint32_t i = 0; i < path.hops; ++i) {
      // No test of the route's end (it mispredicted at every path's end): entries past it are other
      // routes' or spare ones (take_path()), all link ids, and a needless prefetch costs less.
      __builtin_prefetch(s.scratch_.data() + route[i + kPrefetchAhead].link);
      if (route[i].lone) {
        consider_lone_link(s, tightest, route[i], flows);
      } else {
        enter_shared(route[i]);
      }
    }
  } else {
    consider_lone_links(tightest, path);
    shared_at_.clear();
    s.for_each_entry(p, false, [&](std::uint32_t i) { shared_at_.push_back(i); });
    // Padded with entry 0, so that the prefetches need no test of the end (it mispredicted once a
    // path: 3.4 % of an adaptive run's mispredictions).
    shared_at_.insert(shared_at_.end(), kPrefetchAhead, 0);
    for (std::size_t j = 0; j < kPrefetchAhead; ++j) __builtin_prefetch(s.scratch_.data() + route[shared_at_[j]].link);
    for (std::size_t j = 0; j < shared; ++j) {
      __builtin_prefetch(s.scratch_.data() + route[shared_at_[j + kPrefetchAhead]].link);
      enter_shared(route[shared_at_[j]]);
    }
  }
  path.own_key = tightest.link;
  if (tightest.link != kNoId) push_key(tightest);
}

void LocalSolver::push_own_key(PathId p) {
  NetworkState& s = *s_;
  // A link whose only unfrozen variable is p (or that only p crosses at all: a lone link) keeps its
  // share until p freezes, so of those only the tightest needs a key, as in ComponentsSolver::fill().
  Path& path = s.paths_[p];
  Share tightest{std::numeric_limits<double>::infinity(), kNoId, p};
  consider_lone_links(tightest, path);
  const RouteEntry* route = s.route_of(p);
  s.for_each_entry(p, false, [&](std::uint32_t i) {
    if (const FillScratch& sc = s.scratch_[route[i].link]; sc.owner == p) {
      const Share key{std::max(0.0, sc.residual) / sc.unfrozen, route[i].link, p};
      if (tightest > key) tightest = key;
    }
  });
  path.own_key = tightest.link;
  if (tightest.link != kNoId) push_key(tightest);
}

void LocalSolver::release(PathId p, double level) {
  NetworkState& s = *s_;
  ++s.counters_.paths_released;
  join(p);
  s.paths_[p].epoch = unfrozen_mark_;
  ++variables_left_;
  enter_region(p, level);
}

bool LocalSolver::loose(topo::LinkId l, double rate) const {
  const NetworkState& s = *s_;
  // With unfrozen variables on l, its share s is at or above the level (= rate) and can only grow
  // through a variable freezing elsewhere below s; from here on nothing freezes below the level, so
  // if s is the rate (within the tolerance) l saturates there and the path stays its fastest. If s is
  // above, the variables will run faster than the path, which must rise with them. Without unfrozen
  // variables, l is final: the path rises iff l has room left.
  const FillScratch& sc = s.scratch_[l];
  if (sc.unfrozen > 0) return std::max(0.0, sc.residual) / sc.unfrozen > rate * (1 + kTolerance);
  return sc.residual > kTolerance * s.capacity(l);
}

void LocalSolver::saturate(topo::LinkId l, double share) {
  NetworkState& s = *s_;
  // Held paths faster than the level come down to it; if any did, the link's share has grown and it
  // goes back into the heap. Else its unfrozen variables freeze here.
  bool released = false;
  const EntryList& entries = s.links_[l].entries;
  defer_keys_ = true;  // the released paths enter at one level, often onto the same links
  for (const Entry* e = entries.begin(s.spills_); e != entries.end(s.spills_); ++e) {
    const Path& q = s.paths_[e->path];
    if (q.epoch != unfrozen_mark_ && q.epoch != frozen_mark_ && q.new_rate > share * (1 + kTolerance)) {
      release(e->path, share);
      released = true;
    }
  }
  push_deferred_keys();  // l among them: its share has grown, and it goes back in
  if (released) return;
  for (const Entry* e = entries.begin(s.spills_); e != entries.end(s.spills_); ++e)
    if (s.paths_[e->path].epoch == unfrozen_mark_) freeze_local(e->path, share, l);
}

void LocalSolver::freeze_local(PathId id, double share, topo::LinkId at) {
  NetworkState& s = *s_;
  s.set_bottleneck(id, at);
  Path& path = s.paths_[id];
  path.epoch = frozen_mark_;
  --variables_left_;
  const std::int64_t delta = static_cast<std::int64_t>(path.flows) *
                             (NetworkState::quantum_of(share) - NetworkState::quantum_of(path.new_rate));
  path.new_rate = share;
  const std::uint32_t flows = path.flows;  // read once (see enter_region())
  const double frozen_load = share * flows;
  const RouteEntry* route = s.route_of(id);
  s.for_each_entry(id, false, [&](std::uint32_t i) {
    FillScratch& link = s.scratch_[route[i].link];
    link.load += delta;
    link.residual -= frozen_load;
    link.unfrozen -= flows;
  });
}

bool LocalSolver::dead_key(const KeyItem& key) const {
  const NetworkState& s = *s_;
  // A link's key once no variable is left on it, and the own key of a path no longer variable, would
  // pop only to be skipped: a link that gets a variable again by a release gets a fresh key then (see
  // enter_region()). Checks of held paths are never dropped.
  if (key.path == kNoId) return s.scratch_[key.link].unfrozen == 0;
  return !(key.path & kCheck) && s.paths_[key.path].epoch != unfrozen_mark_;
}

void LocalSolver::fill_local() {
  NetworkState& s = *s_;
  Share top{0.0, kNoId};
  KeyItem item{};
  // With no variable left and no check to come, every key left is dead (its link's variables, or its
  // path, have frozen): stop rather than pop them all to drop them.
  while ((variables_left_ > 0 || checks_pending_ > 0) &&
         keys_.pop(top.share, item, [this](const KeyItem& key) { return dead_key(key); })) {
    top.link = item.link;
    top.path = item.path;
    if (top.path != kNoId && (top.path & kCheck)) {  // a held path's rate reached
      --checks_pending_;
      const PathId p = top.path & ~kCheck;
      const std::uint32_t epoch = s.paths_[p].epoch;
      if (epoch != unfrozen_mark_ && epoch != frozen_mark_ && loose(top.link, s.paths_[p].new_rate))
        release(p, top.share);
      continue;
    }
    const FillScratch& link = s.scratch_[top.link];
    if (top.path == kNoId) s.scratch_[top.link].keyed = std::numeric_limits<double>::infinity();
    if (top.path != kNoId) {  // a variable path's tightest lone or own link
      if (s.paths_[top.path].epoch != unfrozen_mark_) continue;
      if (link.region != region_mark_) {
        if (s.links_[top.link].asleep != kAwake) {
          wake_into_region(top.link);
          push_own_key(top.path);
          continue;
        }
        freeze_local(top.path, top.share, top.link);  // lone: nothing else on it
        continue;
      }
      if (link.owner != top.path) {
        // Shared since (the link has a key of its own): the path's own links are fewer than when
        // this key was pushed, so its tightest own key is at or above this one; find it now, not
        // when the link became shared (most such paths freeze elsewhere before this key comes up).
        if (s.paths_[top.path].own_key == top.link) push_own_key(top.path);
        continue;
      }
    }
    if (link.unfrozen == 0) continue;
    const double share = std::max(0.0, link.residual / link.unfrozen);
    if (share > top.share) {  // a lagging key: back in with the current share
      if (top.path != kNoId) {
        // An own key computed before all of p's entries on the link counted (see enter_region()) can
        // have hidden p's true tightest link: find it again.
        push_own_key(top.path);
        continue;
      }
      push_link_key(s, top.link, share);
      continue;
    }
    saturate(top.link, share);
    // An own key whose link released held paths instead of freezing: the link is shared now, and the
    // path, still variable, needs its next own key.
    if (top.path != kNoId && s.paths_[top.path].epoch == unfrozen_mark_ && s.paths_[top.path].own_key == top.link)
      push_own_key(top.path);
  }
}

}  // namespace exasim::flow
