#pragma once
// Solver::Local of FlowNetwork (the default): progressive filling of only the paths whose rates can
// change, every other path held at its rate as fixed load and joining the filling, in level order,
// where the filling shows it must. local_solve.cpp says how and why it is exact.
//
// LIMITATIONS:
//  - a held path off by less than kTolerance (1e-13) relative is left alone (faster than a saturating
//    link, slower than its bottleneck's share, or its bottleneck within 1e-13 of full), so its rates
//    are max-min to that, and link loads are kept in quanta of 2^-16 B/s: equal to ComponentsSolver's
//    within 1e-13, not bit for bit (docs/performance.md, "Exactness").

#include "sim/flow/internal/max_min_solver.hpp"
#include "sim/flow/internal/radix_queue.hpp"

#include <limits>
#include <vector>

namespace exasim::flow {

class LocalSolver final : public MaxMinSolver {
 public:
  static constexpr SolverFeatures kFeatures{.keeps_link_loads = true,
                                            .records_bottlenecks = true,
                                            .tracks_touched_paths = true,
                                            .marks_lone_entries = true,
                                            .sleeps_links = true,
                                            .takes_shortcuts = true};

  void solve(NetworkState& state) override;
  [[nodiscard]] bool solved(const NetworkState& state, PathId p) const override {
    return state.paths_[p].in_set == in_set_;
  }

 private:
  /// Sleeping::Auto lets links sleep while a running mean of the held paths a re-solve released is
  /// above kSleepAbove, until it falls below kWakeBelow; the weight makes it a mean over about the
  /// last hundred re-solves. Spread placements under minimal routing release 27-61 paths a re-solve,
  /// the others 0.5-4, and sleeping pays only for the former: measured in docs/performance.md,
  /// "Sleeping links" (minimal 0.889x, the other cases 1.008-1.027x).
  static constexpr double kReleasedMeanWeight = 0.01;
  static constexpr double kSleepAbove = 12;
  static constexpr double kWakeBelow = 6;
  static constexpr PathId kShared = kNoId - 1;  ///< FillScratch::owner of a link with two unfrozen variables
  static constexpr std::uint32_t kPrefetchAhead = NetworkState::kPrefetchAhead;
  static constexpr std::uint16_t kAwake = NetworkState::kAwake;
  static constexpr std::uint32_t kLoneStale = NetworkState::kLoneStale;
  static constexpr std::uint32_t kNoLone = NetworkState::kNoLone;
  /// A key of keys_ without its share (the queue keeps that as its key).
  struct KeyItem {
    topo::LinkId link;
    PathId path;
  };

  /// The local filling proper, from the keys solve() and release() put in keys_.
  void fill_local();
  /// Pushes the keys deferred_keys_ holds, at their links' shares now, and stops deferring.
  void push_deferred_keys();
  /// Whether a key of keys_ can only pop to be skipped (radix_queue.hpp drops such keys).
  [[nodiscard]] bool dead_key(const KeyItem& key) const;
  void push_key(const Share& key) { keys_.push(key.share, {key.link, key.path}); }
  /// Pushes link l's key at `share` and records it as the least the link has queued (FillScratch::keyed).
  void push_link_key(NetworkState& s, topo::LinkId l, double share) {
    push_key({share, l});
    s.scratch_[l].keyed = share;
  }
  /// Lowers `tightest` (a key of path tightest.path, of `flows` flows) to lone route entry r's share.
  static void consider_lone_link(const NetworkState& s, Share& tightest, const RouteEntry& r, double flows) {
    const Share key = s.lone_key(r, flows, tightest.path);
    if (tightest > key) tightest = key;
  }
  /// Adds the links of variable path p not yet in the region: their held load and variable entries, a
  /// key each if shared, and a check for each held path bottlenecked there; and pushes p's tightest
  /// own key (as push_own_key() would find it at this point).
  void enter_region(PathId p, double level);
  /// A held path becomes variable at `level` (at most its rate): its load on the region's links moves
  /// from held to variable, and its other links enter the region.
  void release(PathId p, double level);
  /// Whether a held path of `rate` bottlenecked on link l must be released when the filling reaches it.
  [[nodiscard]] bool loose(topo::LinkId l, double rate) const;
  /// Pushes variable path p's tightest key among its lone links and the links it alone is unfrozen on.
  void push_own_key(PathId p);
  /// Lowers `tightest` (a key of path tightest.path) to the share of that path's tightest lone link.
  void consider_lone_links(Share& tightest, Path& path);
  /// Region link l saturates at `share`: releases the held paths faster than that (and puts l back),
  /// or freezes its unfrozen variables there.
  void saturate(topo::LinkId l, double share);
  /// Freezes variable path id at `share` on link `at`, taking its share off its region links.
  void freeze_local(PathId id, double share, topo::LinkId at);
  /// Adds a path to the set solve() re-solves (once).
  void join(PathId p);
  /// NetworkState::wake() during solve(): the link also joins the region, with its unfrozen variables.
  void wake_into_region(topo::LinkId l);
  /// A link joins the region: its residual from its kept load, no unfrozen variable yet.
  void open_region_link(FillScratch& sc, double capacity) const {
    sc.region = region_mark_;
    sc.residual = capacity - static_cast<double>(sc.load) * NetworkState::kRateQuantum;
    sc.unfrozen = 0;
    sc.owner = kNoId;
    sc.keyed = std::numeric_limits<double>::infinity();
  }

  /// The state solve() works on. Each method reads it into a local reference first: stores through
  /// any pointer may alias this member, and reloading it in the route loops cost 0.4 % more
  /// instructions (callgrind, scale_bench 4,096 GCDs spread, minimal routing).
  NetworkState* s_ = nullptr;
  std::uint32_t in_set_ = 0;              ///< the Path::in_set mark of the current solve()
  std::uint32_t unfrozen_mark_ = 0;       ///< Path::epoch of its variable paths not yet frozen
  std::uint32_t frozen_mark_ = 0;         ///< ... of those frozen
  std::uint32_t region_mark_ = 0;         ///< FillScratch::region of the links in its region
  RadixQueue<KeyItem> keys_;              ///< the keys of progressive filling
  std::uint32_t variables_left_ = 0;      ///< variable paths not yet frozen
  std::uint32_t checks_pending_ = 0;      ///< checks of held paths in keys_
  std::vector<std::uint32_t> shared_at_;  ///< enter_region(): the shared entries of the path entering
  /// While paths enter at one level (its first paths, or the held paths one link releases:
  /// defer_keys_), a shared link's key waits here, once, and goes in at the link's share once all have
  /// entered (push_deferred_keys()). Each entering path lowered the share and pushed a key again:
  /// under minimal routing a re-solve starts with ~17 paths on the same global links, and the pushes
  /// were a tenth of the instructions (docs/performance.md, "The local solver").
  bool defer_keys_ = false;
  std::vector<topo::LinkId> deferred_keys_;
  double released_mean_ = 0;  ///< Sleeping::Auto: running mean of paths released a re-solve
};

}  // namespace exasim::flow
