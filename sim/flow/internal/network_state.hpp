#pragma once
// The bookkeeping of FlowNetwork (flow_network.hpp) apart from its max-min solvers: links and their
// entry lists, paths and their routes and shared-entry masks, flows, loads, holds, mirrored pairs,
// sleeping links and the distinct capacities. add(), finish() and hold() keep it up to date and mark
// what a solver must look at (dirty_links_, touched_paths_, fresh_lone_); a solver (max_min_solver.hpp)
// reads it, writes each path's new_rate and the filling scratch, and lists the paths it solved in
// comp_paths_.
//
// What the bookkeeping keeps differs by solver (only the local solver reads link loads and
// bottlenecks, the reference solver marks no entry lone): each solver declares it once in a
// SolverFeatures, which the state copies into plain bools, so that its per-link loops test a member
// rather than call into the solver.
//
// LIMITATIONS:
//  - at most 32,768 distinct link capacities (the constructor throws beyond), 2^26 - 1 route entries
//    on one link, 2^31 flows and 2^32 route entries in all (add() throws beyond);
//  - links keep their loads in quanta of kRateQuantum (2^-16 B/s), rates up to 2^47 B/s.

#include "sim/flow/node_flows.hpp"  // FlowId
#include "sim/flow/solver.hpp"
#include "topologies/topology.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace exasim::flow {

/// Sleeping links (FlowNetwork::set_sleeping() says what they are and when they pay).
enum class Sleeping : std::uint8_t { Off, Auto, On };

/// What the bookkeeping keeps for a solver, declared once by each solver class (kFeatures).
struct SolverFeatures {
  /// Shared links keep their load (FillScratch::load) up to date at every rate change.
  bool keeps_link_loads = false;
  /// Paths record the link they froze on (Path::bottleneck, FillScratch::bottlenecked); a change marks
  /// a link dirty only while some path's bottleneck is there.
  bool records_bottlenecks = false;
  /// Paths whose flow count changed are listed in touched_paths_.
  bool tracks_touched_paths = false;
  /// Route entries alone on their link carry RouteEntry::lone (else every entry counts as shared), and
  /// a new path alone on its links gets its rate from add().
  bool marks_lone_entries = false;
  /// Links may sleep (FlowNetwork::set_sleeping()).
  bool sleeps_links = false;
  /// Node-local flows go to NodeFlows, mirrored down links are left out, and a re-solve with nothing
  /// changed is skipped (false: the reference solver, which takes every flow and link itself).
  bool takes_shortcuts = false;
};

struct NetworkState {
  using PathId = std::uint32_t;
  static constexpr std::uint32_t kNoId = 0xffffffff;
  /// Set in the ids of flows that NodeFlows carries (FlowNetwork::kNodeLocal): network flow ids stay below.
  static constexpr FlowId kNodeLocal = 0x80000000u;

  struct Flow {
    double remaining = 0;  ///< bytes left at `updated_s`
    double rate = 0;       ///< bytes/s
    double updated_s = 0;
    std::uint64_t tag = 0;
    PathId path = kNoId;
    FlowId prev = kNoId;  ///< the other flows of its path: a doubly linked list
    FlowId next = kNoId;
    std::uint8_t size_class = 0;  ///< ids are reused per route size class (see take_flow)
  };
  /// A route and the active flows that take it.
  struct Path {
    double new_rate = 0;              ///< solver scratch
    std::uint32_t flows = 0;          ///< active flows on it: its weight on every link it crosses
    FlowId first = kNoId;             ///< one of them; the rest follow Flow::next
    std::uint32_t epoch = 0;          ///< solver scratch: component / frozen marks
    std::uint32_t route_at = 0;       ///< first entry of the path's segment of route_pool_
    std::uint32_t hops = 0;           ///< route entries in use
    std::uint32_t in_set = 0;         ///< LocalSolver: its in_set_ while in the set being re-solved
    topo::LinkId bottleneck = kNoId;  ///< records_bottlenecks: the link it froze on, kNoId before its first solve
    topo::LinkId own_key = kNoId;     ///< LocalSolver: the link of its key from push_own_key()
    std::uint32_t mask_at = 0;        ///< first word of its shared-entry mask in masks_ (mask_words())
    std::uint8_t size_class = 0;      ///< the segment holds kMinSegment << size_class entries
    /// LocalSolver::consider_lone_links(): the entry of its tightest lone link (kNoLone: none), or
    /// kLoneStale once an entry's lone mark or class, or the path's flows, have changed since it was found.
    std::uint32_t lone_hop = kLoneStale;
  };
  /// One route entry on a link: which path, and where its route entry is in route_pool_ (finish()
  /// fixes that entry's back index in O(1) when it moves another path's entry; an index into the
  /// path's route instead cost a cache miss on the path's record first).
  struct Entry {
    PathId path;
    std::uint32_t at;  ///< the path's route_at + the entry's hop, fixed while the path lives
  };
  /// Spill storage of busy links' entries: one arena of power-of-two segments, freed segments reused
  /// by size. A vector per busy link would cost a second dependent cache miss (its header, then its
  /// data) on every visit of the link; an offset into one arena costs none.
  struct SpillPool {
    std::vector<Entry> arena;
    std::vector<std::vector<std::uint32_t>> free;  ///< per log2 of the segment size: free segments
    std::uint32_t take(std::uint8_t log2);
  };
  /// A link's entries, in order: a lone entry inside the link record, two or more in a segment of the
  /// pool (entry i is at the same index either way). Most links carry one path.
  class EntryList {
   public:
    [[nodiscard]] std::uint32_t size() const { return size_; }
    [[nodiscard]] bool empty() const { return size_ == 0; }
    [[nodiscard]] const Entry* begin(const SpillPool& pool) const {
      return size_ > 1 ? pool.arena.data() + spill_ : &inline_;
    }
    [[nodiscard]] const Entry* end(const SpillPool& pool) const { return begin(pool) + size_; }
    [[nodiscard]] Entry& at(SpillPool& pool, std::uint32_t i) { return size_ > 1 ? pool.arena[spill_ + i] : inline_; }
    [[nodiscard]] const Entry& back(const SpillPool& pool) const { return begin(pool)[size_ - 1]; }
    void push_back(SpillPool& pool, Entry e) {
      // Inline for the common cases (an empty link, room left in its segment): new paths push an
      // entry onto every link of their routes.
      if (size_ == 0) {
        inline_ = e;
        size_ = 1;
      } else if (size_ > 1 && size_ < (1u << log2_) && size_ != kMaxSize) {
        pool.arena[spill_ + size_] = e;
        ++size_;
      } else {
        push_back_growing(pool, e);
      }
    }
    void pop_back(SpillPool& pool);
    /// push_back() when the entry spills out of the record or its segment is full.
    void push_back_growing(SpillPool& pool, Entry e);

   private:
    static constexpr std::uint32_t kMaxSize = (1u << 26) - 1;
    std::uint32_t size_ : 26 = 0;
    std::uint32_t log2_ : 6 = 0;   ///< the segment holds 1 << log2_ entries
    std::uint32_t spill_ = kNoId;  ///< segment offset in the arena; kept once allocated: a busy link stays busy
    Entry inline_{};
  };
  static constexpr std::uint32_t kNoMirror = 0xffffffffu;
  static constexpr std::uint32_t kMirrorDown = 0x80000000u;
  /// What the event loop needs of a link in one half cache line, since large runs touch links all over
  /// the machine (two links of a NIC share a line): its load, its search mark and its entries. The
  /// capacity is an index into a table of the machine's few distinct capacities; the progressive
  /// filling scratch (residual capacity, unfrozen entries) lives in arrays of its own.
  struct alignas(32) LinkState {
    std::uint32_t flows = 0;  ///< flow entries: each entry weighted by its path's flow count
    std::uint32_t epoch = 0;
    std::uint16_t capacity_class : 15 = 0;
    /// records_bottlenecks: whether some path's bottleneck is here (FillScratch::bottlenecked > 0).
    /// Only then can a change on the link move a held path, so only then is it marked dirty; the
    /// link's record is at hand where that is decided, its filling scratch is not.
    std::uint16_t holds_bottleneck : 1 = 0;
    /// kAwake, or the allowance class of a sleeping link (see FlowNetwork::set_sleeping()).
    std::uint16_t asleep = 0xffff;
    EntryList entries;
    /// kNoMirror, or the link's pair in set_mirrored(), with kMirrorDown on the down link (left out).
    std::uint32_t mirror = kNoMirror;
  };
  static_assert(sizeof(LinkState) == 32, "a link record should fill half a cache line");
  /// A route entry: the link, where the path sits in that link's entries, and whether it is the link's
  /// only entry ("lone"). The solvers never visit a path's lone links: until the path freezes their
  /// fair share is the link's capacity over the path's flow count, so only the tightest of them
  /// matters (see ComponentsSolver::fill()), and it is found from the route alone, with the link's
  /// capacity class.
  struct RouteEntry {
    topo::LinkId link;
    std::uint32_t index : 26;          ///< EntryList::kMaxSize fits
    std::uint32_t lone : 1;            ///< kept up to date by new_path() and finish_path() (marks_lone_entries)
    std::uint32_t capacity_class : 5;  ///< the link's, or kClassInLink for classes beyond
  };
  static constexpr std::uint32_t kClassInLink = 31;
  static constexpr std::uint32_t kMaxCapacityClasses = 1u << 15;  ///< LinkState::capacity_class's bits
  static constexpr std::uint16_t kAwake = 0xffff;
  /// A heap key of progressive filling: a link's fair share, or (path != kNoId) the tightest lone link
  /// of a path. Keys order by (share, link) either way, so links pop in the same order as if every
  /// lone link were in the heap itself.
  struct Share {
    double share;
    topo::LinkId link;
    PathId path = kNoId;
    // Bitwise, not short-circuit: keys are compared in every route walk, in no pattern.
    bool operator>(const Share& o) const { return (share > o.share) | ((share == o.share) & (link > o.link)); }
  };
  /// Route segments hold at least 8 entries: 64 bytes of RouteEntry, one cache line, so that segments
  /// laid end to end from 0 never share a line. It also keeps path ids below 2^29 (LocalSolver's kCheck
  /// bit). A choice by the layout, not a measured optimum.
  static constexpr std::uint32_t kMinSegment = 8;
  /// How many paths on the route's first link add() compares with the new route, at most: a miss only
  /// costs a second path with the same route (same rates), and the first link is usually a NIC or GPU
  /// link with a handful of paths. Not measured against other bounds.
  static constexpr std::uint32_t kPathCandidates = 4;
  /// How many route entries ahead the route walks ask for link records: routes cross the machine, so
  /// every link's record is a cache miss, and the branches on its contents keep the processor from
  /// overlapping them (10 and 14 measured no better: docs/performance.md, "Tried and rejected").
  static constexpr std::uint32_t kPrefetchAhead = 6;
  static constexpr std::uint32_t kLoneStale = 0xffffffffu;  ///< Path::lone_hop: to be found again
  static constexpr std::uint32_t kNoLone = 0xfffffffeu;     ///< Path::lone_hop: no lone entry
  static constexpr std::uint32_t kRoomSizes = 32;           ///< rooms are powers of two below 2^32
  static constexpr std::uint16_t kNoSleepClass = 0xffff;

  /// Per link: progressive filling scratch, residual capacity and unfrozen entries side by side (one
  /// cache miss per link, not two).
  struct alignas(64) FillScratch {
    double residual = 0;
    /// LocalSolver: the least key the link has queued (infinity: none known); a link whose share
    /// falls gets a new key only below it, not at every fall (docs/performance.md, "The local solver").
    double keyed = 0;
    std::uint32_t unfrozen = 0;
    PathId owner = kNoId;  ///< LocalSolver: the only path among its unfrozen variables, or kShared
    /// keeps_link_loads: the entries' flows times their paths' rates, in kRateQuantum; kept only while
    /// the link has two or more entries (set from its one entry when a second arrives): a lone link is
    /// never read, and skipping it saves a cache miss per lone hop whenever a path's rate changes.
    std::int64_t load = 0;
    std::uint32_t region = 0;  ///< LocalSolver: its region mark while in its region
    /// records_bottlenecks: paths whose bottleneck it is. Here rather than in an array of its own: the
    /// local solver's enter_region() reads it with the rest of the record, one cache miss fewer per
    /// link entering a region (gpt-80b 4,096 spread: 0.977 of the wall time).
    std::uint32_t bottlenecked = 0;
  };
  static_assert(sizeof(FillScratch) == 64, "filling scratch should fill one cache line");
  /// Loads are sums of integers, exact in any order, so they can be kept up to date at every rate
  /// change without drifting: 2^-16 B/s, far below any rate's rounding, and links up to 140 TB/s
  /// (2^63 quanta). Not a measured trade-off: any power of two in that range gives exact sums.
  static constexpr double kRateQuantum = 1.0 / 65536;
  /// std::llround(rate / kRateQuantum) (halves away from zero), inline: llround is a call into libm,
  /// two of them for every path that freezes.
  [[nodiscard]] static std::int64_t quantum_of(double rate) {
    const double x = rate / kRateQuantum;
    auto q = static_cast<std::int64_t>(x);           // toward zero; rates are far below 2^47 B/s
    const double rest = x - static_cast<double>(q);  // exact: |x| < 2^63 and q is x's integer part
    if (rest >= 0.5) ++q;
    if (rest <= -0.5) --q;
    return q;
  }
  [[nodiscard]] static double quantized(double rate) { return static_cast<double>(quantum_of(rate)) * kRateQuantum; }

  NetworkState(const std::vector<topo::Link>& links, SolverFeatures features);

  /// FlowNetwork::hold().
  void hold(const topo::LinkId* links, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      // add() reads every link record of the bundle once its last hop is routed: ask for them now.
      __builtin_prefetch(&links_[links[i]]);
      if (links[i] >= first_held_) {
        ++loads_[links[i]];
        ++holds_;
      }
    }
  }
  /// FlowNetwork::add() of a flow the network itself carries.
  FlowId add(std::span<const topo::LinkId> route, double bytes, std::uint64_t tag);
  /// FlowNetwork::finish() of a flow the network itself carries.
  std::uint64_t finish(FlowId flow);
  /// FlowNetwork::set_mirrored().
  void set_mirrored(std::span<const std::pair<topo::LinkId, topo::LinkId>> pairs);
  /// FlowNetwork::set_sleeping() (links sleep only where the solver sleeps_links).
  void set_sleeping(Sleeping mode) {
    sleep_mode_ = sleeps_links_ ? mode : Sleeping::Off;
    sleeping_ = sleep_mode_ == Sleeping::On;
  }

  [[nodiscard]] const RouteEntry* route_of(PathId p) const { return &route_pool_[paths_[p].route_at]; }
  [[nodiscard]] double capacity(topo::LinkId l) const { return capacities_[links_[l].capacity_class]; }
  [[nodiscard]] double capacity(const RouteEntry& r) const {
    return r.capacity_class == kClassInLink ? capacity(r.link) : capacities_[r.capacity_class];
  }
  /// The key of lone route entry r of path p, of `flows` flows.
  [[nodiscard]] Share lone_key(const RouteEntry& r, double flows, PathId p) const {
    // A lone link's share is its capacity over the path's flows; a sleeping link's class holds the
    // allowance of each flow itself.
    return {capacity(r) / (allowance_class_[r.capacity_class] ? 1.0 : flows), r.link, p};
  }
  /// Words of the shared-entry mask of a path of the size class (one bit per entry of its segment).
  [[nodiscard]] static std::uint32_t mask_words(std::uint8_t size_class) {
    return ((kMinSegment << size_class) + 63) / 64;
  }
  /// Calls f(i) for each route entry i of path p that is shared (lone = false: each lone one), in
  /// route order. No branch per entry on RouteEntry::lone: under adaptive routing half a path's
  /// entries are lone, in no pattern a predictor learns (docs/performance.md, "The local solver").
  template <class F>
  void for_each_entry(PathId p, bool lone, F&& f) const {
    const Path& path = paths_[p];
    const std::uint64_t* mask = &masks_[path.mask_at];
    for (std::uint32_t w = 0, base = 0; base < path.hops; ++w, base += 64) {
      std::uint64_t m = lone ? ~mask[w] : mask[w];
      if (path.hops - base < 64) m &= (std::uint64_t{1} << (path.hops - base)) - 1;
      for (; m != 0; m &= m - 1) f(base + static_cast<std::uint32_t>(std::countr_zero(m)));
    }
  }
  /// Records the link a path froze on, keeping each link's count of such paths.
  void set_bottleneck(PathId p, topo::LinkId l) {
    topo::LinkId& at = paths_[p].bottleneck;
    if (at == l) return;
    if (at != kNoId && --scratch_[at].bottlenecked == 0) links_[at].holds_bottleneck = 0;
    if (l != kNoId && scratch_[l].bottlenecked++ == 0) links_[l].holds_bottleneck = 1;
    at = l;
  }
  /// A sleeping link wakes: its entries count as shared again, its load is summed from them.
  void wake(topo::LinkId l);

  // The solver's features (SolverFeatures), as plain members for the per-link loops.
  const bool keeps_link_loads_;
  const bool records_bottlenecks_;
  const bool tracks_touched_paths_;
  const bool marks_lone_entries_;
  const bool sleeps_links_;
  const bool takes_shortcuts_;

  std::vector<LinkState> links_;
  /// Per link: flows + held, what load() returns, kept apart from the link records: adaptive routing
  /// reads it for every hop of 8 candidate paths per flow, and 4 bytes a link (the switch links of a
  /// 4,096-GCD Frontier job: under 400 KB) stay in cache where 32-byte records do not.
  std::vector<std::uint32_t> loads_;
  /// hold()s not yet taken by add(). A count, not one per link: the bundle that takes them is the
  /// concatenation of the hops that made them, so which of its entries were held is known from the
  /// link id alone, and a per-link count cost a cache miss on every hold (3.5 % of a spread run).
  std::uint64_t holds_ = 0;
  topo::LinkId first_held_ = 0;     ///< hold() holds no link below it
  std::vector<double> capacities_;  ///< distinct link capacities (bytes/s), by LinkState::capacity_class
  /// Per class: whether it is a sleeping link's allowance (bytes/s per flow, not per link), and the
  /// room it was made for (the most flows the link may carry asleep).
  std::vector<char> allowance_class_;
  std::vector<std::uint32_t> class_room_;
  /// The allowance class of a link's capacity class and room, by base * kRoomSizes + log2(room), or
  /// kNoSleepClass before a link of that kind first sleeps.
  std::vector<std::uint16_t> sleep_class_;
  Sleeping sleep_mode_ = Sleeping::Off;  ///< set_sleeping()
  bool sleeping_ = false;                ///< whether links may go to sleep now (the solver updates it under Auto)
  SpillPool spills_;
  std::vector<FillScratch> scratch_;
  std::vector<Flow> flows_;
  std::vector<std::vector<FlowId>> free_flows_;  ///< per size class
  std::vector<Path> paths_;
  // Routes live in one pool, each path slot owning a segment of a power-of-two size; freed slots are
  // reused by paths of the same size class, so adding a flow allocates nothing once slots exist.
  std::vector<RouteEntry> route_pool_;
  /// Per path slot, mask_words() words: bit i set iff route entry i is shared (RouteEntry::lone clear).
  std::vector<std::uint64_t> masks_;
  std::vector<std::vector<PathId>> free_paths_;  ///< per size class
  std::size_t active_ = 0;
  std::size_t active_paths_ = 0;

  // What changed since the last re-solve, and what the re-solve solved.
  std::vector<topo::LinkId> dirty_links_;
  std::vector<PathId> fresh_lone_;     ///< new paths alone on their links, rate set by add()
  std::vector<PathId> touched_paths_;  ///< tracks_touched_paths: paths whose flow count changed
  std::vector<PathId> comp_paths_;     ///< the paths a re-solve gave a new_rate
  /// Marks of Path::epoch and LinkState::epoch; only grow, so no solver mistakes an older mark for its own.
  std::uint32_t epoch_ = 0;
  SolverCounters counters_;

  /// set_mirrored(): per pair, up entries less down entries of the route add() is checking (0 between
  /// calls); the route without its mirrored down links; the pairs the check touched.
  std::vector<std::int32_t> mirror_balance_;
  std::vector<topo::LinkId> unmirrored_route_;
  std::vector<std::uint32_t> mirror_touched_;

 private:
  [[nodiscard]] static std::uint8_t size_class_of(std::size_t hops);
  FlowId take_flow(std::size_t hops);
  PathId take_path(std::size_t hops);
  /// The route without the down links of set_mirrored()'s pairs (in unmirrored_route_), after checking
  /// that it crosses each pair's two links equally often; `dropped_holds`: the holds of the links left out.
  std::span<const topo::LinkId> without_mirrored(std::span<const topo::LinkId> route, std::uint64_t& dropped_holds);
  /// An active path whose route is exactly `route`, or kNoId.
  [[nodiscard]] PathId find_path(std::span<const topo::LinkId> route) const;
  /// Enters a new path on its links; `alone`: no other path crosses any of them (only where
  /// marks_lone_entries).
  PathId new_path(std::span<const topo::LinkId> route, bool& alone);
  /// finish() of a path's last flow (whose entries count `load` each in the links' loads): takes its
  /// flow off the links and the path off them, in one walk of its route.
  void finish_path(PathId p, std::int64_t load);
  /// The rate of a path alone on the links [first, last) (repeats change nothing): the tightest
  /// capacity over the flow entries there, what progressive filling would freeze it at.
  [[nodiscard]] double lone_rate(const topo::LinkId* first, const topo::LinkId* last, topo::LinkId* at) const;
  /// keeps_link_loads: path p's rate moves from old_rate to new_rate on the loads of its links.
  void add_load(PathId p, double old_rate, double new_rate);
  /// The capacity class a route entry on link l carries: the link's (or kClassInLink), or its
  /// allowance class while it sleeps.
  [[nodiscard]] std::uint32_t entry_class(topo::LinkId l) const {
    return links_[l].asleep != kAwake ? links_[l].asleep
                                      : std::min<std::uint32_t>(links_[l].capacity_class, kClassInLink);
  }
  /// Whether shared link l may sleep (every path on it at most its allowance, no path bottlenecked
  /// there, a class left for the allowance); if so it does. Tried when a path joins or leaves it.
  bool try_sleep(topo::LinkId l);
  /// A change on link l (whose record is `link`) may move other paths' rates: the component solver
  /// starts from every such link, the local one only from those some path's bottleneck is on.
  void mark_dirty(topo::LinkId l, const LinkState& link) {
    if (!records_bottlenecks_ || link.holds_bottleneck) dirty_links_.push_back(l);
  }
  /// Marks a link's entry (the route entry it points back to) as the link's only entry or not (or
  /// as an entry of a sleeping link, which the solver passes over like a lone one), with its class.
  void set_lone(const Entry& e, bool lone) {
    Path& p = paths_[e.path];
    RouteEntry& r = route_pool_[e.at];
    const std::uint32_t hop = e.at - p.route_at;
    r.lone = lone;
    r.capacity_class = entry_class(r.link);
    std::uint64_t& word = masks_[p.mask_at + hop / 64];
    const std::uint64_t bit = std::uint64_t{1} << (hop % 64);
    word = lone ? word & ~bit : word | bit;
    // p's tightest lone entry (LocalSolver::consider_lone_links()) stays known where that is cheap:
    // links going to sleep and waking mark thousands of entries, and finding it again walks the route.
    if (p.lone_hop == hop) {
      p.lone_hop = kLoneStale;  // its key changed, or it is no longer lone
    } else if (lone && p.lone_hop == kNoLone) {
      p.lone_hop = hop;
    } else if (lone && p.lone_hop != kLoneStale &&
               lone_key(route_pool_[p.route_at + p.lone_hop], p.flows, e.path) > lone_key(r, p.flows, e.path)) {
      p.lone_hop = hop;
    }
  }
};

}  // namespace exasim::flow
