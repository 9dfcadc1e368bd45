#pragma once
// The execution core: runs every rank's op stream (sim/schedule/plan.hpp) over a network backend
// (network_backend.hpp). One implementation for every simulating runtime, so that the fast flow core
// and SimGrid differ only in their network models:
//  - a collective starts when every member of its group has posted it. Members post in the same order,
//    so the k-th post of a member belongs to the group's k-th collective; posts that disagree on kind
//    or size are a plan mismatch;
//  - a group runs its collectives along a dimension one at a time, in the order its members posted
//    them: a collective every member has posted starts when the group's previous one has completed.
//    NCCL runs the collectives of one communicator in order, one after another (each is a kernel on
//    the communicator's stream); a plan holds one communicator per group and dimension. Send/Recv
//    pairs do not queue. A machine whose collectives.group_order is "concurrent" (an MPI library's
//    non-blocking collectives, the emulation host's calibration) starts each at once, beside the others;
//  - a started collective runs its stages one after another (stage_router.hpp): a stage's bundles
//    start together as flows, the stage ends its latency term after its last bundle, then the next
//    stage is routed (at that time: adaptive routing sees the load then) and started; after the last
//    one the collective completes and its waiters go on. Rank 0's wire bytes add up over stages;
//  - Send/Recv: the k-th Send from a to b meets the k-th Recv at b from a (partner: p2p_partner(),
//    plan.hpp); once both are posted the pair is one flow from sender to receiver, and both handles
//    complete one route latency (+ the per-step overhead) after its last byte. Unmatched posts wait in
//    a queue per (sender, receiver) pair: memory grows with pipeline neighbours, not world size squared;
//  - a rank blocked in a Wait counts the time as exposed communication of the collective's dimension;
//  - consecutive kernels of a rank that no observer watches are one timer (their summed time): nothing
//    can happen to a rank between its kernels. They still count one event each in RunResult::events;
//  - collectives and transfers that become ready together start at launch_ready(), ordered by first
//    member (sender), kind, dimension, group (receiver) and sequence, each routed seeing the load of
//    those before it: adaptive routing makes the order part of the answer, and it must not depend on
//    the order in which a backend handled the events that made them ready. A stage after the first
//    goes through the same order;
//  - a rank that cannot go on when nothing is left to happen is a deadlock ("deadlock: rank R stuck at
//    op NAME", from finish()).
//
// Flow keys (sim/collectives/flow_key.hpp) name flows by what they are, never by launch order, so every
// backend routes every flow alike under minimal and Valiant routing.
//
// Memory layout (it matters at 32k ranks, where an instant handles thousands of ranks): per-rank state
// is in separate arrays, dimension (slot) major, rank fastest; an Instance is half a cache line; a
// group's open collectives sit in a small ring (open_id()).
//
// LIMITATIONS:
//  - the latency term is paid after a stage's bandwidth phase, not interleaved with it;
//  - communication beside compute keeps its rate (only compute slows); the slowdown is one factor
//    whatever the collective, its size or the SMs it takes; a posted collective counts as running from
//    its post on (NCCL's kernel is launched, and spins, from then); the wait after a run assumes that
//    communication either goes on through it or had ended before it (not that it ends within it);
//  - Send/Recv is a rendezvous: no eager protocol for small messages, no send buffering;
//  - compute beside communication: while a rank computes and a collective or transfer it has posted is
//    still in flight, its kernels progress Job::compute_slowdown_beside_comm (f) slower (NCCL/RCCL
//    kernels take SMs/CUs and memory bandwidth). The core keeps, per rank, the time O both were true
//    during a compute run; when the run's timer ends the rank waits the work it did not do: f x O more
//    if communication still runs, f x O / (1 + f) if it has ended, then moves on; the extra time counts
//    as compute (RankTimes::slowed_s);
//  - a straggling rank (Job::rank_compute_factor) runs every kernel that factor slower, whatever its
//    kind; its communication keeps its rate;
//  - at most `handle slots` collectives of one group can be open at once (a plan error beyond).

#include "sim/exec/network_backend.hpp"
#include "sim/exec/stage_router.hpp"
#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace exasim::exec {

using runtime::Rank;
using InstanceId = std::uint32_t;

/// The core over a network backend of type `Network`: NetworkBackend itself (exec::Executor, virtual
/// calls), or a backend's own final class (calls per event direct and inline, executor_impl.hpp).
template <class Network>
class BasicExecutor {
 public:
  /// `backend` and `router` must outlive the executor (`observer` is copied, `observe` read here only);
  /// `observer` may be empty.
  /// Throws std::invalid_argument when the plan needs more GPUs than the machine has.
  BasicExecutor(const topo::Topology& topology, const runtime::Job& job, Network& backend,
                const std::function<bool(Rank)>& observe, const runtime::OpObserver& observer,
                const StageRouter& router = default_router());

  /// Every rank runs from its first op until it computes or blocks (at the current time, 0).
  void start();
  /// The backend's clock: set before each of the calls below.
  void set_now(double now_s) { now_ = now_s; }
  [[nodiscard]] double now() const { return now_; }

  /// A compute timer of rank r ended.
  void compute_ended(Rank r);
  /// The latency term of an instance's current stage ended: the next stage becomes ready to launch, or
  /// the collective (transfer) completes.
  void stage_ended(InstanceId id);
  /// A flow started with this tag (an instance id) ended.
  void flow_ended(std::uint32_t tag);
  void timer_ended(TimerKind kind, std::uint32_t id) {
    if (kind == TimerKind::Compute)
      compute_ended(id);
    else
      stage_ended(id);
  }
  /// Starts what became ready since the last call, in the order the header describes.
  void launch_ready();

  /// Hints for backends that handle batches of events: load what an event will touch.
  void prefetch_rank(Rank r) const {
    __builtin_prefetch(&pc_[r]);
    __builtin_prefetch(&since_[r]);
  }
  void prefetch_instance(InstanceId id) const { __builtin_prefetch(&instances_[id]); }
  /// The grid dimension of the collective (or Send/Recv) whose flow the backend was given `tag` for.
  [[nodiscard]] std::uint8_t flow_dim(std::uint32_t tag) const { return instances_[tag & ~kOneOfSeveral].dim; }

  [[nodiscard]] std::uint64_t events() const { return events_; }
  [[nodiscard]] std::uint64_t ops_done() const { return ops_done_; }
  [[nodiscard]] std::uint64_t ops_total() const { return ops_total_; }

  /// The result once nothing is left to happen, named `backend`. Throws std::logic_error on a deadlock.
  [[nodiscard]] runtime::RunResult finish(std::string backend);

 private:
  static constexpr InstanceId kNone = 0xffffffff;

  /// One collective call of one group, or one matched Send/Recv pair, from the first post to the last
  /// member's Wait. Half a cache line: every member of a group touches it, from ranks all over the
  /// machine; what only launches and stage ends need is kept beside, per id (stage_latency_s_, bundles_left_,
  /// LaterStages).
  struct Instance {
    double bytes = 0;
    Rank first_member = 0;  ///< Send/Recv: the sender
    std::uint32_t posted = 0;
    std::uint32_t refs = 0;     ///< members that have not consumed it in a Wait yet
    Rank first_waiter = kNone;  ///< ranks blocked in its Wait, in blocking order (see next_waiter_)
    Rank last_waiter = kNone;
    std::uint8_t dim = 0;
    schedule::CollKind kind{};
    bool done = false;
    /// Stages not ended yet, the current one included; 0 until launched. Here, not beside: stage ends
    /// and launches touch the instance anyway, and a second record would be a second cache miss.
    std::uint8_t stages_left = 0;
  };
  static_assert(sizeof(Instance) == 32);

  /// Set in the tag of a flow whose stage has other bundles: its end first counts down bundles_left_.
  /// A flow alone in its stage (every ring) then costs one read of stage_latency_s_ at its end, as
  /// the fast core did before stages (a read-modify-write of a count beside it measured slower).
  static constexpr std::uint32_t kOneOfSeveral = 0x80000000u;

  /// What routing a collective's later stages needs, per id; written only for collectives of more
  /// than one stage.
  struct LaterStages {
    std::uint32_t group = 0;     ///< group id
    std::uint32_t sequence = 0;  ///< the group's count of earlier collectives along the dimension
    std::uint8_t stages = 0;
    collectives::Algorithm algorithm{};
  };

  /// Collectives of one group that not every member has posted yet: base .. base + open - 1, their ids
  /// in a small ring (open_id()). Of those every member posted, one runs at a time (the header's
  /// in-order rule); the others wait in a queue linked through queued_next_, oldest first. They start
  /// in the order they were posted, so `started` is the next one's sequence (its flow keys' name).
  struct GroupState {
    std::uint32_t base = 0;
    std::uint32_t open = 0;
    std::uint32_t started = 0;
    InstanceId queue_head = kNone;
    InstanceId queue_tail = kNone;
    bool running = false;
  };

  /// One (sender, receiver) pair: its posts still waiting for their partner, oldest first (all Sends or
  /// all Recvs), and how many transfers it has matched (the flow key's sequence).
  struct PairState {
    std::vector<InstanceId> unmatched;
    std::uint32_t matched = 0;
    bool sends = false;
  };

  /// For a Compute op: the op index after the run of consecutive Compute ops it starts, and the run's
  /// summed kernel time. Built once per stream (ranks share their role's stream).
  struct ComputeRun {
    std::uint32_t end = 0;
    double time_s = 0;
  };

  struct ReadyLaunch {
    std::uint64_t first;  ///< first member (sender) << 32 | transfer << 8 | dimension
    std::uint64_t names;  ///< group id (receiver) << 32 | sequence
    InstanceId id;
    bool operator<(const ReadyLaunch& o) const { return first < o.first || (first == o.first && names < o.names); }
  };
  struct PostRecord {
    std::uint16_t slot;
    std::uint32_t op_index;
    double t_s;
  };

  [[nodiscard]] const std::vector<schedule::Op>& ops_of(Rank r) const { return plan_.stream_of(r).ops; }
  [[nodiscard]] bool observed(Rank r) const { return observer_ && observed_[r]; }
  [[nodiscard]] std::vector<ComputeRun> compute_runs(const std::vector<schedule::Op>& ops) const;
  [[nodiscard]] std::size_t stream_index(Rank r) const {
    return static_cast<std::size_t>(&plan_.stream_of(r) - plan_.streams.data());
  }
  [[nodiscard]] const std::vector<ComputeRun>& run_of(Rank r) const { return runs_[stream_index(r)]; }
  void next_op(Rank r) {
    ++pc_[r];
    ++ops_done_;
  }
  InstanceId& open_id(std::uint8_t dim, std::uint32_t group_id, std::uint32_t k) {
    return open_ids_[dim][std::size_t{group_id} * open_ring_ + (k & (open_ring_ - 1))];
  }
  /// Appends `item` to the singly linked list from `first` to `last` whose links are `next`.
  static void append_linked(std::uint32_t& first, std::uint32_t& last, std::vector<std::uint32_t>& next,
                            std::uint32_t item) {
    if (last == kNone)
      first = item;
    else
      next[last] = item;
    last = item;
    next[item] = kNone;
  }
  InstanceId& slot(Rank r, std::uint16_t s) { return slot_[std::size_t{s} * world_ + r]; }
  std::uint32_t& posted(Rank r, std::uint8_t dim) { return posted_[std::size_t{dim} * world_ + r]; }
  double& exposed_s(Rank r, std::uint8_t dim) { return exposed_s_[std::size_t{dim} * world_ + r]; }

  /// Inline, as in the fast core before the split: out of line it is one more call on every compute
  /// end and wake-up (callgrind, 4,096 GPUs: 0.45 % more instructions in all).
  [[gnu::always_inline]] inline void advance(Rank r);
  void post(Rank r, const schedule::Op& op);
  void grow_open_rings();
  void post_p2p(Rank r, const schedule::Op& op);
  /// A collective, transfer or next stage is ready: it starts at launch_ready(), with the others that
  /// became ready then, in an order that names them.
  void defer_launch(InstanceId id, std::uint32_t group_or_receiver, std::uint32_t sequence, bool p2p) {
    const Instance& inst = instances_[id];
    ready_.push_back({(std::uint64_t{inst.first_member} << 32) | (std::uint64_t{p2p} << 8) | inst.dim,
                      (std::uint64_t{group_or_receiver} << 32) | sequence, id});
  }
  void launch_p2p(InstanceId id, Rank receiver, std::uint32_t sequence);
  void launch_stage(InstanceId id, std::uint32_t group_id, std::uint32_t sequence);
  void complete(InstanceId id);
  /// Rank r is done with the collective in `s` (its Wait returned). Small and on every Wait: inline,
  /// with what only observed ranks need out of line.
  void consume(Rank r, std::uint16_t s) {
    const InstanceId id = slot(r, s);
    if (observed(r)) report_post(r, s, id);
    slot(r, s) = kNone;
    if (--instances_[id].refs == 0) free_instances_.push_back(id);
  }
  /// Reports the post of the collective in slot `s` of an observed rank, from post to completion.
  void report_post(Rank r, std::uint16_t s, InstanceId id);
  InstanceId allocate();
  void report(Rank r, std::uint32_t op_index, double t0, double t1) {
    if (observed(r)) observer_(r, op_index, t0, t1);
  }

  const topo::Topology& topo_;
  const runtime::Job& job_;
  const schedule::Plan& plan_;
  const schedule::ProcessGrid& grid_;
  const std::size_t dims_;
  const Rank world_;
  Network& backend_;
  const runtime::OpObserver observer_;  ///< a copy: callers may pass a temporary (tests pass {})
  const StageRouter& router_;
  const topo::LinkLoadView* const load_;

  double now_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t flows_ = 0;
  std::uint64_t ops_total_ = 0;  ///< ops of all ranks' streams
  std::uint64_t ops_done_ = 0;

  std::size_t slots_per_rank_ = 0;
  // Per rank, as separate arrays: an instant handles ranks in nearly rank order, and each event needs
  // only a few of these. What is also per dimension or per handle slot is stored dimension (slot) major,
  // rank fastest: lockstep ranks handle the same op at one instant, so neighbours in a group share the
  // cache lines of its dimension and slot. Rank-major, one rank's slots alone span kilobytes (AxoNN
  // keeps 4 handles a layer open) and every event missed on its own line.
  std::vector<std::uint32_t> pc_;
  std::vector<double> since_;          ///< per rank: when its current wait (or, if observed, compute) began
  std::vector<std::uint32_t> posted_;  ///< per dimension and rank: collectives posted so far (posted())
  std::vector<InstanceId> slot_;       ///< per handle slot and rank (slot())
  std::vector<double> finish_s_;
  std::vector<double> exposed_s_;  ///< per dimension and rank (exposed_s())
  std::vector<Rank> next_waiter_;  ///< the rank blocked after this one in the same Wait
  /// Per stream: its kernels' summed time, every rank's compute time (compute never waits, so a rank
  /// computes exactly its stream's kernels; summing them is exact where now - start would round).
  std::vector<double> stream_compute_s_;
  std::vector<std::vector<ComputeRun>> runs_;  ///< per stream of the plan
  std::vector<std::vector<GroupState>> groups_;
  std::vector<std::vector<InstanceId>> open_ids_;  ///< per dimension: open_ring_ ids per group
  /// A power of two, doubled when a group has that many collectives open: the k-th collective of a
  /// group takes entry k mod open_ring_, so a ring as large as the handle slots (512 for AxoNN with
  /// overlap) would make every new collective write a cold line of a 2 KiB ring, where the 4 it
  /// starts with keep a group's ring in one line.
  std::uint32_t open_ring_ = 4;
  std::uint32_t max_open_ring_ = 1;                     ///< a power of two >= handle slots: more open is a plan error
  std::unordered_map<std::uint64_t, PairState> pairs_;  ///< (sender << 32 | receiver), pairs that communicate
  std::vector<Instance> instances_;
  std::vector<InstanceId> free_instances_;
  std::vector<double> stage_latency_s_;      ///< per instance: its current stage's latency term
  std::vector<std::uint32_t> bundles_left_;  ///< per instance: bundles of its current stage still moving
  std::vector<LaterStages> later_stages_;    ///< per instance
  std::vector<double> done_s_;               ///< per instance, with an observer only: when it completed
  /// Per instance: the collective queued after it in its group (GroupState).
  std::vector<InstanceId> queued_next_;
  std::vector<double> wire_rank0_;
  std::vector<topo::LinkId> route_;  ///< a transfer being launched (kept for its capacity)
  collectives::StageRoute stage_;    ///< the stage being launched (kept for its capacity)
  const collectives::OnHop hold_hop_ = [this](const topo::LinkId* links, std::size_t count) {
    backend_.hold(links, count);
  };
  std::vector<ReadyLaunch> ready_;  ///< collectives, stages and transfers to launch at launch_ready()
  // Compute beside communication (all empty when the job's slowdown is 0).
  /// Per rank: collectives and transfers it posted that have not completed.
  std::vector<std::uint16_t> in_flight_;
  /// Per rank: when its current compute run began overlapping communication (its start), or -1.
  std::vector<double> overlap_since_;
  /// Per rank: f x the overlap of its current compute run so far.
  std::vector<double> owed_s_;
  /// Per rank: the slowdown waited so far (added to its compute time).
  std::vector<double> slowed_s_;
  std::vector<std::uint8_t> slowing_;  ///< per rank: 1 while it waits the work its last run did not do
  std::vector<Rank> receiver_;         ///< per instance: a transfer's receiver
  void comm_started(Rank r);
  void comm_ended(Rank r);
  void overlap_ends(Rank r);
  /// The run of r just ended (or its slowdown wait): true when r must first wait the work it did not do
  /// (a timer was started).
  bool wait_slowdown(Rank r);
  std::vector<bool> observed_;
  std::vector<std::vector<PostRecord>> post_;
};

/// The core for any backend, through NetworkBackend's virtual functions (SimGrid, tests).
using Executor = BasicExecutor<NetworkBackend>;
extern template class BasicExecutor<NetworkBackend>;

}  // namespace exasim::exec
