#pragma once
// Flows sharing links by max-min fairness (equal weights: the CM02 sharing of SimGrid without its
// latency weighting), re-solved only for the links and flows an event touches.
//
// A flow's route may cross a link more than once: a ring collective is one flow (a "bundle") whose
// route is the concatenation of its hops' routes, and a link that k hops cross carries k times the
// bundle's rate. The solver is weighted max-min with these multiplicities: a link's fair share is its
// residual capacity over the number of unfrozen route entries on it.
//
// Flows that take exactly the same route share one Path: max-min gives them the same rate, so the
// solver handles the path once, weighted by its flow count, instead of each flow (AxoNN keeps several
// collectives of one group in flight, and every one of them takes the group's ring). Each flow keeps
// its own bytes and its own predicted finish.
//
// add() and finish() mark the touched links dirty and resolve() re-solves from there (Solver):
//  - Local (default, local_solve.cpp): a path's rate can change only if its bottleneck does (the
//    saturated link on which it is the fastest, recorded when it froze). Progressive filling runs
//    over the paths whose flow count changed and those bottlenecked on a dirty link, every other
//    path held at its rate as fixed load; a held path joins the filling, in level order, where the
//    filling shows it must (a link saturates below its rate, or its bottleneck would run faster than
//    it). Links keep their loads (the sum of their entries' rates) so that joining a link costs no
//    read of its entries. The max-min allocation is unique, so the result is the whole component's,
//    up to rounding. The work follows the paths whose rates change, not the component: spread
//    placements tie thousands of paths into one component through a few shared links, and
//    re-solving all of them at every completion was 97 % of the run time (docs/performance.md,
//    "The max-min flow network and its three solvers").
//  - Components: the connected components of the dirty links (links <-> paths that cross them,
//    transitively), filled whole (a lone path simply gets its tightest link). It also steps over lone
//    links (crossed by one path only: see RouteEntry and fill()) and stops filling once every path is
//    frozen.
//  - Reference: every active path re-solved, every link taken into the heap and the heap emptied: the
//    straightforward solver that tests hold the others against (Components matches it bit for bit).
// Only flows whose rate changed get a new predicted completion; the others keep theirs.
//
// LIMITATIONS:
//  - fluid model: no packets, no per-flow window or TCP-gamma cap, no protocol overhead on the wire;
//  - a flow's rate is bounded by its links only (no endpoint injection limit beyond the NIC links);
//  - routes are fixed for the lifetime of a flow (adaptive choice happens when it starts);
//  - Solver::Local leaves a held path alone when it is off by less than 1e-13 relative (faster than a
//    saturating link, slower than its bottleneck's share, or its bottleneck within 1e-13 of full), so
//    its rates are max-min to that; link loads are kept in quanta of 2^-16 B/s. Under adaptive
//    routing such differences (and any other, down to the order of a sum) can reorder nearly
//    simultaneous events and change routes: the iteration is then ill-conditioned, see
//    docs/performance.md, "Exactness";
//  - at most 32,768 distinct link capacities (the constructor throws beyond).
//
// Flows whose route stays on one node's GPU-GPU links go to NodeFlows (node_flows.hpp), which gives
// them the same rates from much less memory; their ids carry kNodeLocal. Not under Solver::Reference: the
// reference solver handles every flow itself.

#include "sim/flow/internal/radix_queue.hpp"
#include "sim/flow/node_flows.hpp"
#include "sim/flow/solver.hpp"
#include "topologies/topology.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace exasim::flow {

/// How the machine lays out the links its nodes own (topology.hpp): node n owns the ids
/// [n * links_per_node, (n + 1) * links_per_node). nodes = 0: unknown (every flow takes the general solver).
struct NodeLayout {
  std::uint32_t nodes = 0;
  std::uint32_t links_per_node = 0;
  std::uint32_t gpus_per_node = 0;
};

class FlowNetwork final : public topo::LinkLoadView {
 public:
  /// Set in the ids of flows that NodeFlows carries.
  static constexpr FlowId kNodeLocal = 0x80000000u;
  /// Called by resolve() for every flow whose predicted finish time changed; the prediction replaces the
  /// flow's earlier one, and infinity means it no longer moves (node_flows.hpp's change_rate()).
  using Scheduler = std::function<void(double finish_s, FlowId flow)>;

  FlowNetwork(const std::vector<topo::Link>& links, Solver solver, NodeLayout layout = {});

  /// Counts the links of `links` at or above first_held() as load (load()) until the flow that takes
  /// them is add()ed: the hops of a bundle routed so far, so that an adaptive choice for its next hop
  /// sees them. Below first_held() routing reads no load (set_first_held()), and nothing is held.
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
  /// The least link id hold() holds (default 0: every link).
  void set_first_held(topo::LinkId first) { first_held_ = first; }
  [[nodiscard]] topo::LinkId first_held() const { return first_held_; }
  /// A new flow of `bytes` over `route` (links may repeat). While holds are pending, `route` must be a
  /// bundle of held hops (a collective's stage, routed hop by hop): each of its entries at or above
  /// first_held() takes one hold, rather than adding to the load. Taking more holds than are pending
  /// throws std::logic_error. It gets its rate at the next resolve().
  FlowId add(std::span<const topo::LinkId> route, double bytes, std::uint64_t tag);
  FlowId add(const std::vector<topo::LinkId>& route, double bytes, std::uint64_t tag) {
    return add(std::span<const topo::LinkId>(route), bytes, tag);
  }
  /// Sleeping links (Solver::Local only). A shared link whose paths all run at most its capacity
  /// over a room of more flows than it has (its allowance) cannot be full: the solver passes over it
  /// like a lone link, each path on it held below the allowance, until a path reaches the allowance
  /// (the link wakes and joins the filling at that level) or its flows outgrow the room (it wakes).
  /// Exact: below the allowance the link cannot bind. It pays where shared links rarely bind
  /// (minimal routing, where the global links do: 0.89 of the time) and costs where they often do
  /// (adaptive routing, whose NIC links run close to their share: 1.22; Valiant: 1.30; random
  /// placement under minimal routing: 1.21): docs/performance.md, "Sleeping links". What tells them apart
  /// is the cascades: spread placements under minimal routing release 27-61 held paths a re-solve,
  /// the others 0.5-4. Sleeping::Auto follows that (a running mean of the paths a re-solve released:
  /// links go to sleep while it is above 12, and no longer once it falls below 6); the fast runtime
  /// uses it. Sleeping::On is for tests.
  enum class Sleeping : std::uint8_t { Off, Auto, On };
  void set_sleeping(Sleeping mode) {
    sleep_mode_ = solver_ == Solver::Local ? mode : Sleeping::Off;
    sleeping_ = sleep_mode_ == Sleeping::On;
  }
  /// Mirrored link pairs (Solver::Local and Components; before the first add()): for each (up, down),
  /// every route crosses `up` as often as `down`, and the two have the same capacity. A NIC's pair is
  /// such a pair where every inter-node hop leaves its source GPU's NIC and enters its destination's,
  /// and the traffic is rings and trees over members on distinct nodes (nic_mirrors.hpp decides):
  /// each member's NIC is crossed once each way. The down link then carries exactly the up link's
  /// entries at every moment, and its every share equals the up link's to the bit (the same paths
  /// freeze on both in the same order); the up link, the lower id, wins every tie, so the down link
  /// never decides a rate. add() leaves such down links out of the paths it builds: answers are the
  /// same, and a spread run walks ~17 % fewer route entries. Every route is checked: one that crosses
  /// a pair unequally throws std::logic_error (whoever chose the pairs was wrong). load() of a left-out
  /// link reads 0 (routing reads no NIC link).
  void set_mirrored(std::span<const std::pair<topo::LinkId, topo::LinkId>> pairs);
  [[nodiscard]] std::size_t mirrored_pairs() const { return mirror_balance_.size(); }
  /// Asks the CPU to start loading the flow's record (a hint for batches of completions).
  void prefetch(FlowId flow) const {
    if (flow & kNodeLocal)
      local_->prefetch(flow & ~kNodeLocal);
    else
      __builtin_prefetch(&flows_[flow]);
  }
  /// Removes a completed flow; returns its tag.
  std::uint64_t finish(FlowId flow);
  /// Re-solves what changed since the last call, at simulated time `now_s`.
  void resolve(double now_s, const Scheduler& schedule);

  /// Flows' route entries on the link (a bundle crossing it twice counts twice), held links included.
  [[nodiscard]] double load(topo::LinkId link) const override { return static_cast<double>(loads_[link]); }
  [[nodiscard]] const std::uint32_t* dense_loads() const override { return loads_.data(); }
  [[nodiscard]] double rate_Bps(FlowId flow) const {
    return flow & kNodeLocal ? local_->rate_Bps(flow & ~kNodeLocal) : flows_[flow].rate;
  }
  [[nodiscard]] std::size_t active_flows() const { return active_ + (local_ ? local_->active_flows() : 0); }
  /// Distinct routes among the active flows (for tests: flows on one route share a path).
  [[nodiscard]] std::size_t active_paths() const { return active_paths_ + (local_ ? local_->active_paths() : 0); }
  /// Whether flows inside a node go to NodeFlows (see the constructor for when they do not).
  [[nodiscard]] bool node_local() const { return local_.has_value(); }
  /// The re-solves so far, of the flows this class solves (NodeFlows' node-local flows not included).
  [[nodiscard]] const SolverCounters& counters() const { return counters_; }

 private:
  using PathId = std::uint32_t;
  static constexpr std::uint32_t kNoId = 0xffffffff;

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
    std::uint32_t in_set = 0;         ///< solve_local(): in_set_ while in the set being re-solved
    topo::LinkId bottleneck = kNoId;  ///< Solver::Local: the link it froze on, kNoId before its first solve
    topo::LinkId own_key = kNoId;     ///< solve_local(): the link of its key from push_own_key()
    std::uint32_t mask_at = 0;        ///< first word of its shared-entry mask in masks_ (mask_words())
    std::uint8_t size_class = 0;      ///< the segment holds kMinSegment << size_class entries
    /// consider_lone_links(): the entry of its tightest lone link (kNoLone: none), or kLoneStale once
    /// an entry's lone mark or class, or the path's flows, have changed since it was found.
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
  /// What the event loop needs of a link in one half cache line, since large runs touch links all over
  /// the machine (two links of a NIC share a line): its load, its search mark and its entries. The
  /// capacity is an index into a table of the machine's few distinct capacities; the progressive
  /// filling scratch (residual capacity, unfrozen entries) lives in arrays of its own.
  struct alignas(32) LinkState {
    std::uint32_t flows = 0;  ///< flow entries: each entry weighted by its path's flow count
    std::uint32_t epoch = 0;
    std::uint16_t capacity_class : 15 = 0;
    /// Solver::Local: whether some path's bottleneck is here (FillScratch::bottlenecked > 0). Only
    /// then can a change on the link move a held path, so only then is it marked dirty; the link's
    /// record is at hand where that is decided, its filling scratch is not.
    std::uint16_t holds_bottleneck : 1 = 0;
    /// kAwake, or the allowance class of a sleeping link (see set_sleeping()).
    std::uint16_t asleep = 0xffff;
    EntryList entries;
    /// kNoMirror, or the link's pair in set_mirrored(), with kMirrorDown on the down link (left out).
    std::uint32_t mirror = kNoMirror;
  };
  static_assert(sizeof(LinkState) == 32, "a link record should fill half a cache line");
  /// A route entry: the link, where the path sits in that link's entries, and whether it is the link's
  /// only entry ("lone"). The solver never visits a path's lone links: until the path freezes their
  /// fair share is the link's capacity over the path's flow count, so only the tightest of them
  /// matters (see fill()), and it is found from the route alone, with the link's capacity class.
  struct RouteEntry {
    topo::LinkId link;
    std::uint32_t index : 26;  ///< EntryList::kMaxSize fits
    std::uint32_t lone : 1;    ///< kept up to date by new_path() and finish_path() (never under Solver::Reference)
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
  /// A key of keys_ without its share (the queue keeps that as its key).
  struct KeyItem {
    topo::LinkId link;
    PathId path;
  };
  static constexpr std::uint32_t kNoMirror = 0xffffffffu;
  static constexpr std::uint32_t kMirrorDown = 0x80000000u;
  static constexpr std::uint32_t kMinSegment = 8;
  /// How many paths on the route's first link add() compares with the new route, at most.
  static constexpr std::uint32_t kPathCandidates = 4;

  [[nodiscard]] static std::uint8_t size_class_of(std::size_t hops);
  [[nodiscard]] const RouteEntry* route_of(PathId p) const { return &route_pool_[paths_[p].route_at]; }
  FlowId take_flow(std::size_t hops);
  /// The route without the down links of set_mirrored()'s pairs (in unmirrored_route_), after checking
  /// that it crosses each pair's two links equally often; `dropped_holds`: the holds of the links left out.
  std::span<const topo::LinkId> without_mirrored(std::span<const topo::LinkId> route, std::uint64_t& dropped_holds);
  PathId take_path(std::size_t hops);
  /// An active path whose route is exactly `route`, or kNoId.
  [[nodiscard]] PathId find_path(std::span<const topo::LinkId> route) const;
  /// Enters a new path on its links; `alone`: no other path crosses any of them (never under Solver::Reference).
  PathId new_path(std::span<const topo::LinkId> route, bool& alone);
  /// finish() of a path's last flow (whose entries count `load` each in the links' loads): takes its
  /// flow off the links and the path off them, in one walk of its route.
  void finish_path(PathId p, std::int64_t load);
  /// The rate of a path alone on the links [first, last) (repeats change nothing): the tightest
  /// capacity over the flow entries there, what progressive filling would freeze it at.
  [[nodiscard]] double lone_rate(const topo::LinkId* first, const topo::LinkId* last, topo::LinkId* at) const;
  /// Collects the connected components of the dirty links (all links with flows under Solver::Reference),
  /// their paths into comp_paths_, and sets each path's new_rate.
  void solve_components();
  /// Progressive filling of the component just collected: its last `paths` paths, keys in heap_.
  void fill(std::size_t paths, std::uint32_t frozen_mark);
  /// Solver::Local (local_solve.cpp): progressive filling of the paths whose rates can change, the
  /// rest held at their rates; held paths join as the filling finds they must (see there). Their paths
  /// go to comp_paths_ with their new_rate.
  void solve_local();
  /// The local filling proper, from the keys solve_local() and release() put in keys_.
  void fill_local();
  /// Pushes the keys deferred_keys_ holds, at their links' shares now, and stops deferring.
  void push_deferred_keys();
  /// Whether a key of keys_ can only pop to be skipped (radix_queue.hpp drops such keys).
  [[nodiscard]] bool dead_key(const KeyItem& key) const;
  void push_key(const Share& key) { keys_.push(key.share, {key.link, key.path}); }
  /// Pushes link l's key at `share` and records it as the least the link has queued (FillScratch::keyed).
  void push_link_key(topo::LinkId l, double share) {
    push_key({share, l});
    scratch_[l].keyed = share;
  }
  /// Lowers `tightest` (a key of path tightest.path, of `flows` flows) to lone route entry r's share.
  void consider_lone_link(Share& tightest, const RouteEntry& r, double flows) const {
    const Share key = lone_key(r, flows, tightest.path);
    if (tightest > key) tightest = key;
  }
  /// The key of lone route entry r of path p, of `flows` flows.
  [[nodiscard]] Share lone_key(const RouteEntry& r, double flows, PathId p) const {
    // A lone link's share is its capacity over the path's flows; a sleeping link's class holds the
    // allowance of each flow itself.
    return {capacity(r) / (allowance_class_[r.capacity_class] ? 1.0 : flows), r.link, p};
  }
  /// Adds the links of variable path p not yet in the local region: their held load and variable
  /// entries, a key each if shared, and a check for each held path bottlenecked there; and pushes p's
  /// tightest own key (as push_own_key() would find it at this point).
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
  static constexpr PathId kShared = kNoId - 1;
  static constexpr std::uint32_t kLoneStale = 0xffffffffu;  ///< Path::lone_hop: to be found again
  static constexpr std::uint32_t kNoLone = 0xfffffffeu;     ///< Path::lone_hop: no lone entry
  /// How many route entries ahead new_path() and finish() ask for link records: routes cross the
  /// machine, so every link's record is a cache miss, and the branches on its contents keep the
  /// processor from overlapping them (10 and 14 measured no better: docs/performance.md, "Tried and rejected").
  static constexpr std::uint32_t kPrefetchAhead = 6;
  /// Adds a path to the set solve_local() re-solves (once).
  void join(PathId p);
  /// Records the link a path froze on, keeping each link's count of such paths.
  void set_bottleneck(PathId p, topo::LinkId l);

  [[nodiscard]] double capacity(topo::LinkId l) const { return capacities_[links_[l].capacity_class]; }
  /// The capacity class a route entry on link l carries: the link's (or kClassInLink), or its
  /// allowance class while it sleeps.
  [[nodiscard]] std::uint32_t entry_class(topo::LinkId l) const {
    return links_[l].asleep != kAwake ? links_[l].asleep
                                      : std::min<std::uint32_t>(links_[l].capacity_class, kClassInLink);
  }
  /// Whether shared link l may sleep (every path on it at most its allowance, no path bottlenecked
  /// there, a class left for the allowance); if so it does. Tried when a path joins or leaves it.
  bool try_sleep(topo::LinkId l);
  /// A sleeping link wakes: its entries count as shared again, its load is summed from them.
  void wake(topo::LinkId l);
  /// wake() during solve_local(): the link also joins the region, with its unfrozen variables.
  void wake_into_region(topo::LinkId l);
  [[nodiscard]] double capacity(const RouteEntry& r) const {
    return r.capacity_class == kClassInLink ? capacity(r.link) : capacities_[r.capacity_class];
  }
  /// A change on link l (whose record is `link`) may move other paths' rates: the component solver
  /// starts from every such link, the local one only from those some path's bottleneck is on.
  void mark_dirty(topo::LinkId l, const LinkState& link) {
    if (solver_ != Solver::Local || link.holds_bottleneck) dirty_links_.push_back(l);
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
    // p's tightest lone entry (consider_lone_links()) stays known where that is cheap: links going
    // to sleep and waking mark thousands of entries, and finding it again walks the whole route.
    if (p.lone_hop == hop) {
      p.lone_hop = kLoneStale;  // its key changed, or it is no longer lone
    } else if (lone && p.lone_hop == kNoLone) {
      p.lone_hop = hop;
    } else if (lone && p.lone_hop != kLoneStale &&
               lone_key(route_pool_[p.route_at + p.lone_hop], p.flows, e.path) > lone_key(r, p.flows, e.path)) {
      p.lone_hop = hop;
    }
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

  /// The node-local flows of machines whose node layout NodeFlows supports (see the constructor).
  [[nodiscard]] static std::optional<NodeFlows> node_flows(const std::vector<topo::Link>& links, NodeLayout layout);

  std::optional<NodeFlows> local_;
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
  static constexpr std::uint32_t kRoomSizes = 32;  ///< rooms are powers of two below 2^32
  static constexpr std::uint16_t kNoSleepClass = 0xffff;
  Sleeping sleep_mode_ = Sleeping::Off;  ///< set_sleeping()
  bool sleeping_ = false;                ///< whether links may go to sleep now
  double released_mean_ = 0;             ///< Sleeping::Auto: running mean of paths released a re-solve
  SpillPool spills_;
  /// Per link: progressive filling scratch, residual capacity and unfrozen entries side by side (one
  /// cache miss per link, not two).
  struct alignas(64) FillScratch {
    double residual = 0;
    /// solve_local(): the least key the link has in keys_ (infinity: none known); a link whose share
    /// falls gets a new key only below it, not at every fall (docs/performance.md, "The local solver").
    double keyed = 0;
    std::uint32_t unfrozen = 0;
    PathId owner = kNoId;  ///< solve_local(): the only path among its unfrozen variables, or kShared
    /// Solver::Local: the entries' flows times their paths' rates, in kRateQuantum; kept only while the
    /// link has two or more entries (set from its one entry when a second arrives): a lone link is
    /// never read, and skipping it saves a cache miss per lone hop whenever a path's rate changes.
    std::int64_t load = 0;
    std::uint32_t region = 0;  ///< solve_local(): region_mark_ while in its region
    /// Solver::Local: paths whose bottleneck it is. Here rather than in an array of its own:
    /// enter_region() reads it with the rest of the record, one cache miss fewer per link entering a
    /// region (gpt-80b 4,096 spread: 0.977 of the wall time).
    std::uint32_t bottlenecked = 0;
  };
  static_assert(sizeof(FillScratch) == 64, "filling scratch should fill one cache line");
  /// Loads are sums of integers, exact in any order, so they can be kept up to date at every rate
  /// change without drifting: 2^-16 B/s, far below any rate's rounding, and links up to 140 TB/s.
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
  /// A link joins solve_local()'s region: its residual from its kept load, no unfrozen variable yet.
  void open_region_link(FillScratch& sc, double capacity) const {
    sc.region = region_mark_;
    sc.residual = capacity - static_cast<double>(sc.load) * kRateQuantum;
    sc.unfrozen = 0;
    sc.owner = kNoId;
    sc.keyed = std::numeric_limits<double>::infinity();
  }
  /// Solver::Local: path p's rate moves from old_rate to new_rate on the loads of its links.
  void add_load(PathId p, double old_rate, double new_rate);
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
  const Solver solver_;
  [[nodiscard]] bool reference() const { return solver_ == Solver::Reference; }

  // Dirty tracking and solver scratch.
  std::vector<topo::LinkId> dirty_links_;
  std::vector<PathId> fresh_lone_;  ///< new paths alone on their links, rate set by add()
  std::uint32_t epoch_ = 0;
  std::vector<PathId> comp_paths_;  ///< paths of the components solved, component after component
  std::vector<topo::LinkId> stack_;
  std::vector<FlowId> changed_;       ///< flows of the component whose rate changed, in id order
  std::vector<FlowId> sort_scratch_;  ///< for sort_ids()
  std::vector<Share> heap_;           ///< the keys of the component being solved (Solver::Components)

  // Local solver state (solve_local()); only Solver::Local records bottlenecks (FillScratch::bottlenecked).
  std::uint32_t in_set_ = 0;              ///< the Path::in_set mark of the current solve_local()
  std::uint32_t unfrozen_mark_ = 0;       ///< solve_local(): Path::epoch of its variable paths not yet frozen
  std::uint32_t frozen_mark_ = 0;         ///< ... of those frozen
  std::uint32_t region_mark_ = 0;         ///< FillScratch::region of the links in its region
  RadixQueue<KeyItem> keys_;              ///< solve_local(): the keys of progressive filling
  std::uint32_t variables_left_ = 0;      ///< solve_local(): variable paths not yet frozen
  std::uint32_t checks_pending_ = 0;      ///< solve_local(): checks of held paths in keys_
  std::vector<std::uint32_t> shared_at_;  ///< enter_region(): the shared entries of the path entering
  /// solve_local(): while paths enter at one level (its first paths, or the held paths one link
  /// releases: defer_keys_), a shared link's key waits here, once, and goes in at the link's share
  /// once all have entered (push_deferred_keys()). Each entering path lowered the share and pushed a
  /// key again: under minimal routing a re-solve starts with ~17 paths on the same global links, and
  /// the pushes were a tenth of the instructions (docs/performance.md, "The local solver").
  bool defer_keys_ = false;
  std::vector<topo::LinkId> deferred_keys_;
  std::vector<PathId> touched_paths_;  ///< paths whose flow count changed since the last resolve
  /// set_mirrored(): per pair, up entries less down entries of the route add() is checking (0 between
  /// calls); the route without its mirrored down links; the pairs the check touched.
  std::vector<std::int32_t> mirror_balance_;
  std::vector<topo::LinkId> unmirrored_route_;
  std::vector<std::uint32_t> mirror_touched_;
  SolverCounters counters_;
};

}  // namespace exasim::flow
