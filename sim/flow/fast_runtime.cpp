#include "sim/flow/fast_runtime.hpp"

#include "sim/flow/event_queue.hpp"
#include "sim/flow/flow_network.hpp"
#include "sim/collectives/flow_key.hpp"
#include "sim/collectives/router.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <unordered_map>

namespace exasim::flow {

namespace {

using runtime::Rank;
using schedule::Op;
using schedule::OpType;

enum class EventType : std::uint8_t { ComputeDone, FlowDone, CollectiveDone };

/// Time and order come from the EventQueue (time, then insertion: ties resolve deterministically).
struct Event {
  std::uint32_t id;
  std::uint32_t version;
  EventType type;
};

using InstanceId = std::uint32_t;
constexpr InstanceId kNone = 0xffffffff;

/// One collective call of one group, or one matched Send/Recv pair, from the first post to the last
/// member's Wait. Half a cache line: every member of a group touches it, from ranks all over the
/// machine; what only the launch and the end need (latency, completion time) is kept beside, per id.
struct Instance {
  double bytes = 0;
  Rank first_member = 0;  ///< Send/Recv: the sender
  std::uint32_t posted = 0;
  std::uint32_t refs = 0;        ///< members that have not consumed it in a Wait yet
  Rank first_waiter = kNone;     ///< ranks blocked in its Wait, in blocking order (see next_waiter_)
  Rank last_waiter = kNone;
  std::uint8_t dim = 0;
  schedule::CollKind kind{};
  bool done = false;
};
static_assert(sizeof(Instance) == 32);

/// Collectives of one group that not every member has posted yet: the group's collectives base ..
/// base + open - 1, their instance ids kept in a small ring (see Simulation::open_id()). Members post in
/// the same order, so the k-th post of any member belongs to collective k. At most `handle slots`
/// collectives can be open at once (the member that posted them holds a slot for each).
struct GroupState {
  std::uint32_t base = 0;
  std::uint32_t open = 0;
};

/// One (sender, receiver) pair: its posts still waiting for their partner, oldest first, and how many
/// transfers it has matched (the flow key's sequence). Unmatched posts are all Sends or all Recvs: a post
/// of the other kind matches the oldest one (the k-th Send from a to b is the k-th Recv at b from a).
/// Only pairs that communicate have an entry (pipeline neighbours: a few per rank).
struct PairState {
  std::vector<InstanceId> unmatched;
  std::uint32_t matched = 0;
  bool sends = false;
};

/// The node layout for FlowNetwork's node-local flows, or none where a ring mixes hops inside a node
/// with hops between nodes: its bundle would cross GPU-GPU links together with network links, and
/// node-local flows must then be solved with the network (a Megatron data-parallel ring over two
/// GPUs of each node, say). Every ring of the 4D plans in the scale benchmark stays inside a node or
/// leaves it at every hop.
flow::NodeLayout node_layout(const topo::Topology& topo, const runtime::Job& job) {
  const auto& grid = job.plan->grid;
  for (std::size_t d = 0; d < grid.dims().size(); ++d) {
    const std::uint32_t p = grid.dim(d).size;
    if (p < 3) continue;  // a ring of two: both hops join the same pair of GPUs
    for (Rank r = 0; r < grid.world_size(); ++r) {
      if (grid.coord(r, d) != 0) continue;
      bool inside = false, between = false;
      for (std::uint32_t k = 0; k < p; ++k) {
        const bool same = topo.node_of(job.gpu(grid.group_member(r, d, k))) ==
                          topo.node_of(job.gpu(grid.group_member(r, d, (k + 1) % p)));
        (same ? inside : between) = true;
      }
      if (inside && between) return {};
    }
  }
  return {topo.node_count(), topo.links_per_node(), topo.gpus_per_node()};
}

class Simulation {
 public:
  Simulation(const topo::Topology& topo, const runtime::Job& job, FastOptions options,
             const std::function<bool(Rank)>& observe, const runtime::OpObserver& observer)
      : topo_(topo), job_(job), plan_(*job.plan), grid_(plan_.grid), dims_(grid_.dims().size()),
        world_(grid_.world_size()), network_(topo.links(), options.full_resolve, node_layout(topo, job)),
        observer_(observer), progress_(options.progress), reverse_instants_(options.reverse_instants),
        first_load_read_link_(topo.first_load_read_link()) {
    if (world_ > topo.gpu_count())
      throw std::invalid_argument("plan needs " + std::to_string(world_) + " GPUs, the machine has " +
                                  std::to_string(topo.gpu_count()));
    slots_per_rank_ = 0;
    for (const auto& s : plan_.streams) slots_per_rank_ = std::max<std::size_t>(slots_per_rank_, s.slots);
    pc_.assign(world_, 0);
    since_.assign(world_, 0);
    posted_.assign(std::size_t{world_} * dims_, 0);
    slot_.assign(std::size_t{world_} * slots_per_rank_, kNone);
    finish_s_.assign(world_, 0.0);
    exposed_s_.assign(std::size_t{world_} * dims_, 0.0);
    next_waiter_.assign(world_, kNone);
    while (max_open_ring_ < slots_per_rank_) max_open_ring_ *= 2;
    open_ring_ = std::min<std::uint32_t>(open_ring_, max_open_ring_);
    groups_.resize(dims_);
    open_ids_.resize(dims_);
    for (std::size_t d = 0; d < dims_; ++d) {
      if (grid_.dim(d).size == 1) continue;
      groups_[d].resize(world_ / grid_.dim(d).size);
      open_ids_[d].assign(groups_[d].size() * open_ring_, kNone);
    }
    wire_rank0_.assign(dims_, 0.0);
    for (Rank r = 0; r < world_; ++r) ops_total_ += ops_of(r).size();
    for (const auto& stream : plan_.streams) {
      runs_.push_back(compute_runs(stream.ops));
      double total = 0;
      for (const Op& op : stream.ops)
        if (op.type == OpType::Compute) total += job_.kernel_time_s[op.kernel];
      stream_compute_s_.push_back(total);
    }
    if (observer_) {
      observed_.assign(world_, false);
      for (Rank r = 0; r < world_; ++r) observed_[r] = observe && observe(r);
      post_.resize(world_);
    }
  }

  runtime::RunResult run() {
    for (Rank r = 0; r < world_; ++r) advance(r);
    std::vector<Event> batch;
    while (true) {
      launch_ready();
      network_.resolve(now_, schedule_flow_);
      if (queue_.empty()) break;
      // Handle every event of this instant (including those it adds at the same time) before
      // re-solving the network once.
      now_ = queue_.next_time();
      while (!queue_.empty() && queue_.next_time() == now_) {
        queue_.pop_instant(batch);
        if (reverse_instants_) std::reverse(batch.begin(), batch.end());
        // Lockstep ranks make an instant thousands of independent events over the whole machine: fetch
        // the state of the events a few places ahead while handling this one.
        constexpr std::size_t kAhead = 8;
        for (std::size_t i = 0; i < std::min(kAhead, batch.size()); ++i) prefetch(batch[i]);
        for (std::size_t i = 0; i < batch.size(); ++i) {
          if (i + kAhead < batch.size()) prefetch(batch[i + kAhead]);
          handle(batch[i]);
        }
      }
      if (progress_ && events_ >= next_progress_check_) report_progress(false);
    }
    if (progress_) report_progress(true);
    return finish();
  }

 private:
  void prefetch(const Event& e) const {
    switch (e.type) {
      case EventType::ComputeDone:
        __builtin_prefetch(&pc_[e.id]);
        __builtin_prefetch(&since_[e.id]);
        break;
      case EventType::FlowDone: network_.prefetch(e.id); break;
      case EventType::CollectiveDone: __builtin_prefetch(&instances_[e.id]); break;
    }
  }

  void push(double t, EventType type, std::uint32_t id, std::uint32_t version = 0) {
    queue_.push(t, Event{id, version, type});
  }

  /// Reports at most 4 times a second, and only once the run has taken 2 s (short runs stay quiet);
  /// the final report comes only if an earlier one did, so a bar that was drawn gets finished.
  void report_progress(bool final) {
    next_progress_check_ = events_ + 65536;  // reading the clock every event would cost more than it saves
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (final ? !progress_shown_ : (wall < 2.0 || wall < last_progress_s_ + 0.25)) return;
    last_progress_s_ = wall;
    progress_shown_ = true;
    progress_({final ? 1.0 : static_cast<double>(ops_done_) / static_cast<double>(ops_total_), now_, wall, final});
  }

  [[nodiscard]] const std::vector<Op>& ops_of(Rank r) const { return plan_.stream_of(r).ops; }
  [[nodiscard]] bool observed(Rank r) const { return observer_ && observed_[r]; }

  /// For a Compute op: the op index after the run of consecutive Compute ops it starts, and the run's
  /// summed kernel time. Built once per stream (ranks share their role's stream).
  struct ComputeRun {
    std::uint32_t end = 0;
    double time_s = 0;
  };
  [[nodiscard]] std::vector<ComputeRun> compute_runs(const std::vector<Op>& ops) const {
    std::vector<ComputeRun> runs(ops.size());
    for (std::size_t i = ops.size(); i-- > 0;) {
      if (ops[i].type != OpType::Compute) continue;
      const bool continues = i + 1 < ops.size() && ops[i + 1].type == OpType::Compute;
      runs[i].end = continues ? runs[i + 1].end : static_cast<std::uint32_t>(i + 1);
      runs[i].time_s = job_.kernel_time_s[ops[i].kernel] + (continues ? runs[i + 1].time_s : 0.0);
    }
    return runs;
  }
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
  InstanceId& slot(Rank r, std::uint16_t s) { return slot_[std::size_t{s} * world_ + r]; }
  std::uint32_t& posted(Rank r, std::uint8_t dim) { return posted_[std::size_t{dim} * world_ + r]; }
  double& exposed_s(Rank r, std::uint8_t dim) { return exposed_s_[std::size_t{dim} * world_ + r]; }

  void handle(const Event& e) {
    if (e.type == EventType::FlowDone && !network_.current(e.id, e.version)) return;  // superseded prediction
    ++events_;
    switch (e.type) {
      case EventType::ComputeDone: {
        Rank r = e.id;
        if (observed(r)) {
          report(r, pc_[r], since_[r], now_);
          next_op(r);
        } else {  // the whole run of kernels ended: each counts as an event, as on the other runtimes
          const std::uint32_t end = run_of(r)[pc_[r]].end;
          events_ += end - pc_[r] - 1;
          ops_done_ += end - pc_[r];
          pc_[r] = end;
        }
        advance(r);
        break;
      }
      case EventType::FlowDone: {
        const auto inst_id = static_cast<InstanceId>(network_.finish(e.id));
        push(now_ + latency_s_[inst_id], EventType::CollectiveDone, inst_id);
        break;
      }
      case EventType::CollectiveDone: complete(e.id); break;
    }
  }

  /// Runs rank r from its program counter until it computes, blocks or ends.
  void advance(Rank r) {
    const auto& ops = ops_of(r);
    while (pc_[r] < ops.size()) {
      const Op& op = ops[pc_[r]];
      switch (op.type) {
        case OpType::Compute:
          // An unobserved rank runs consecutive kernels as one event: nothing else can happen to it
          // in between (compute does not depend on the network), so only the run's end matters.
          if (observed(r)) since_[r] = now_;  // only a trace needs the start of a kernel
          push(now_ + (observed(r) ? job_.kernel_time_s[op.kernel] : run_of(r)[pc_[r]].time_s), EventType::ComputeDone,
               r);
          return;
        case OpType::CollStart: post(r, op); next_op(r); break;
        case OpType::Wait: {
          InstanceId id = slot(r, op.slot);
          Instance& inst = instances_[id];
          if (!inst.done) {
            since_[r] = now_;
            if (inst.last_waiter == kNone) inst.first_waiter = r;
            else next_waiter_[inst.last_waiter] = r;
            inst.last_waiter = r;
            next_waiter_[r] = kNone;
            return;
          }
          consume(r, op.slot);
          report(r, pc_[r], now_, now_);
          next_op(r);
          break;
        }
      }
    }
    finish_s_[r] = now_;
  }

  void post(Rank r, const Op& op) {
    if (schedule::is_p2p(op.coll)) {
      post_p2p(r, op);
      return;
    }
    const std::uint32_t p = grid_.dim(op.dim).size;
    const std::uint32_t group_id = grid_.group_id(r, op.dim);
    GroupState& group = groups_[op.dim][group_id];
    const std::uint32_t k = posted(r, op.dim)++;
    const bool first_post = k == group.base + group.open;  // the first post of collective k
    if (first_post && group.open == open_ring_) {
      if (open_ring_ == max_open_ring_)
        throw std::logic_error("plan error: more collectives open on one group than handle slots at " +
                               plan_.names[op.name]);
      grow_open_rings();
    }
    InstanceId& open = open_id(op.dim, group_id, k);  // after any growth, which moves the rings
    if (first_post) {
      open = allocate();
      ++group.open;
      Instance& inst = instances_[open];
      inst.first_member = grid_.group_member(r, op.dim, 0);
      inst.dim = op.dim;
      inst.kind = op.coll;
      inst.bytes = op.bytes;
      inst.refs = p;
    }
    const InstanceId id = open;
    slot(r, op.slot) = id;
    if (observed(r)) post_[r].push_back({op.slot, pc_[r], now_});
    Instance& inst = instances_[id];
    if (inst.kind != op.coll || inst.bytes != op.bytes)
      throw std::logic_error("plan mismatch: group members posted different collectives at " +
                             plan_.names[op.name]);
    if (++inst.posted == p) {  // collective k is the oldest open one: members post in the same order
      --group.open;
      defer_launch(id, group_id, group.base++, false);
    }
  }

  /// Doubles every group's ring of open collective ids, each id moving to its place in the larger ring.
  void grow_open_rings() {
    const std::uint32_t grown = 2 * open_ring_;
    for (std::size_t d = 0; d < dims_; ++d) {
      if (groups_[d].empty()) continue;
      std::vector<InstanceId> ids(groups_[d].size() * grown, kNone);
      for (std::size_t g = 0; g < groups_[d].size(); ++g)
        for (std::uint32_t k = groups_[d][g].base; k != groups_[d][g].base + groups_[d][g].open; ++k)
          ids[g * grown + (k & (grown - 1))] = open_ids_[d][g * open_ring_ + (k & (open_ring_ - 1))];
      open_ids_[d] = std::move(ids);
    }
    open_ring_ = grown;
  }

  /// A Send or Recv: pair it with the partner's oldest unmatched opposite post, or queue it.
  void post_p2p(Rank r, const Op& op) {
    const auto size = static_cast<std::int64_t>(grid_.dim(op.dim).size);
    const std::int64_t coord = grid_.coord(r, op.dim);
    const auto partner_coord = static_cast<std::uint32_t>(((coord + op.peer) % size + size) % size);
    const Rank partner = grid_.group_member(r, op.dim, partner_coord);
    if (partner == r) throw std::logic_error("plan error: send/recv to itself at " + plan_.names[op.name]);
    const bool is_send = op.coll == schedule::CollKind::Send;
    const Rank sender = is_send ? r : partner, receiver = is_send ? partner : r;
    const std::uint64_t key = (std::uint64_t{sender} << 32) | receiver;
    PairState& pair = pairs_[key];
    InstanceId id;
    if (!pair.unmatched.empty() && pair.sends != is_send) {
      id = pair.unmatched.front();
      pair.unmatched.erase(pair.unmatched.begin());
      if (instances_[id].bytes != op.bytes || instances_[id].dim != op.dim)
        throw std::logic_error("plan mismatch: send and recv sizes differ at " + plan_.names[op.name]);
      ++instances_[id].posted;
      defer_launch(id, receiver, pair.matched++, true);
    } else {
      id = allocate();
      Instance& inst = instances_[id];
      inst.first_member = sender;
      inst.dim = op.dim;
      inst.kind = schedule::CollKind::Send;
      inst.bytes = op.bytes;
      inst.refs = 2;
      inst.posted = 1;
      pair.sends = is_send;
      pair.unmatched.push_back(id);
    }
    slot(r, op.slot) = id;
    if (observed(r)) post_[r].push_back({op.slot, pc_[r], now_});
  }

  /// A collective or transfer is ready: it starts at the end of the instant, with the others that became
  /// ready then, in an order that names them (see launch_ready()).
  void defer_launch(InstanceId id, std::uint32_t group_or_receiver, std::uint32_t sequence, bool p2p) {
    const Instance& inst = instances_[id];
    ready_.push_back({(std::uint64_t{inst.first_member} << 32) | (std::uint64_t{p2p} << 8) | inst.dim,
                      (std::uint64_t{group_or_receiver} << 32) | sequence, id});
  }

  /// Starts every collective and transfer that became ready at this instant, ordered by first member
  /// (sender), then kind, dimension, group (receiver) and sequence: adaptive routing sees the load of
  /// the launches before it, so the order is part of the answer, and it must not depend on the order
  /// in which the instant's events happened to be handled.
  void launch_ready() {
    if (ready_.empty()) return;
    if (!std::is_sorted(ready_.begin(), ready_.end())) std::sort(ready_.begin(), ready_.end());
    for (const ReadyLaunch& l : ready_) {
      const auto sequence = static_cast<std::uint32_t>(l.names & 0xffffffffu);
      if (l.first & 0x100u) launch_p2p(l.id, static_cast<Rank>(l.names >> 32), sequence);
      else launch(l.id, static_cast<std::uint32_t>(l.names >> 32), sequence);
    }
    ready_.clear();
  }

  /// Both sides posted: one flow from sender to receiver, then one route latency. `sequence`: the pair's
  /// count of earlier transfers, for the flow key.
  void launch_p2p(InstanceId id, Rank receiver, std::uint32_t sequence) {
    Instance& inst = instances_[id];
    route_.clear();
    const std::uint64_t flow_key = collectives::p2p_flow_key(job_.seed, inst.first_member, receiver, sequence);
    topo_.route(job_.gpu(inst.first_member), job_.gpu(receiver), flow_key, &network_, route_);
    network_.add(route_, inst.bytes, id);
    ++flows_;
    if (inst.first_member == 0) wire_rank0_[inst.dim] += inst.bytes;
    latency_s_[id] = topo_.latency_s(route_) + job_.collective_step_overhead_s;
  }

  /// All members posted: route the collective (collectives/router.hpp) and start its bundle flow.
  /// `sequence`: the group's count of earlier collectives along this dimension, for the flow keys.
  /// LIMITATIONS (for now): one stage of one bundle, i.e. ring only.
  void launch(InstanceId id, std::uint32_t group_id, std::uint32_t sequence) {
    const Instance& inst = instances_[id];
    const auto call = runtime::group_call(job_, inst.first_member, inst.dim, group_id, sequence, inst.kind, inst.bytes);
    const auto algorithm = collectives::resolve_algorithm(job_.collective_algorithm, topo_, call);
    collectives::route_stage(algorithm, topo_, call, 0, &network_, hold_hop_, stage_);
    wire_rank0_[inst.dim] += stage_.rank0_wire_bytes;
    network_.add(stage_.links, stage_.bundles.front().bytes, id);
    ++flows_;
    latency_s_[id] = stage_.latency_s;
  }

  void complete(InstanceId id) {
    Instance& inst = instances_[id];
    inst.done = true;
    if (observer_) done_s_[id] = now_;
    const std::uint8_t dim = inst.dim;
    Rank r = inst.first_waiter;
    inst.first_waiter = inst.last_waiter = kNone;
    // The waiters are a group's members, often a stride apart in the per-rank arrays: ask for all of
    // their state at once rather than one miss after another.
    for (Rank w = r; w != kNone; w = next_waiter_[w]) {
      __builtin_prefetch(&pc_[w]);
      __builtin_prefetch(&since_[w]);
      __builtin_prefetch(&exposed_s(w, dim));
    }
    // advance() may allocate instances and move instances_: no reference to `inst` past this point.
    while (r != kNone) {
      const Rank next = next_waiter_[r];  // read first: advance(r) may make r wait elsewhere
      const Op& op = ops_of(r)[pc_[r]];
      exposed_s(r, dim) += now_ - since_[r];
      consume(r, op.slot);
      report(r, pc_[r], since_[r], now_);
      next_op(r);
      advance(r);
      r = next;
    }
  }

  /// Rank r is done with the collective in `s` (its Wait returned).
  void consume(Rank r, std::uint16_t s) {
    InstanceId id = slot(r, s);
    Instance& inst = instances_[id];
    if (observed(r)) {
      auto& posts = post_[r];
      auto it = std::find_if(posts.begin(), posts.end(), [&](const PostRecord& p) { return p.slot == s; });
      observer_(r, it->op_index, it->t_s, done_s_[id]);
      posts.erase(it);
    }
    slot(r, s) = kNone;
    if (--inst.refs == 0) free_instances_.push_back(id);
  }

  InstanceId allocate() {
    if (!free_instances_.empty()) {
      InstanceId id = free_instances_.back();
      free_instances_.pop_back();
      instances_[id] = Instance{};
      return id;
    }
    instances_.emplace_back();
    latency_s_.push_back(0);
    if (observer_) done_s_.push_back(0);
    return static_cast<InstanceId>(instances_.size() - 1);
  }

  void report(Rank r, std::uint32_t op_index, double t0, double t1) {
    if (observed(r)) observer_(r, op_index, t0, t1);
  }

  runtime::RunResult finish() {
    for (Rank r = 0; r < world_; ++r) {
      if (pc_[r] != ops_of(r).size())
        throw std::logic_error("deadlock: rank " + std::to_string(r) + " stuck at op " +
                               plan_.names[ops_of(r)[pc_[r]].name]);
    }
    std::vector<runtime::RankTimes> times(world_);
    for (Rank r = 0; r < world_; ++r) {
      times[r].finish_s = finish_s_[r];
      times[r].compute_s = stream_compute_s_[stream_index(r)];
      times[r].exposed_s.resize(dims_);
      for (std::size_t d = 0; d < dims_; ++d) times[r].exposed_s[d] = exposed_s(r, static_cast<std::uint8_t>(d));
    }
    return runtime::finished_run("fast", plan_, std::move(times), wire_rank0_, events_, flows_);
  }

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

  const topo::Topology& topo_;
  const runtime::Job& job_;
  const schedule::Plan& plan_;
  const schedule::ProcessGrid& grid_;
  const std::size_t dims_;
  const Rank world_;
  FlowNetwork network_;
  const runtime::OpObserver& observer_;

  double now_ = 0;
  EventQueue<Event> queue_;
  std::uint64_t events_ = 0;
  std::uint64_t flows_ = 0;

  const ProgressCallback progress_;
  const bool reverse_instants_;
  const topo::LinkId first_load_read_link_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::uint64_t ops_total_ = 0;  ///< ops of all ranks' streams
  std::uint64_t ops_done_ = 0;
  std::uint64_t next_progress_check_ = 0;
  double last_progress_s_ = 0;
  bool progress_shown_ = false;

  std::size_t slots_per_rank_;
  std::vector<std::uint32_t> pc_;
  std::vector<double> since_;  ///< per rank: when its current wait (or, if observed, compute) began
  // Per rank, as separate arrays: an instant handles ranks in nearly rank order, and each event needs
  // only a few of these. What is also per dimension or per handle slot is stored dimension (slot) major,
  // rank fastest: lockstep ranks handle the same op at one instant, so neighbours in a group share the
  // cache lines of its dimension and slot. Rank-major, one rank's slots alone span kilobytes (AxoNN
  // keeps 4 handles a layer open) and every event missed on its own line.
  std::vector<std::uint32_t> posted_;  ///< per dimension and rank: collectives posted so far (posted())
  std::vector<InstanceId> slot_;       ///< per handle slot and rank (slot())
  std::vector<double> finish_s_;
  std::vector<double> exposed_s_;      ///< per dimension and rank (exposed_s())
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
  std::uint32_t max_open_ring_ = 1;  ///< a power of two >= handle slots: more open is a plan error
  std::unordered_map<std::uint64_t, PairState> pairs_;  ///< (sender << 32 | receiver), pairs that communicate
  std::vector<Instance> instances_;
  std::vector<InstanceId> free_instances_;
  std::vector<double> latency_s_;  ///< per instance: from its last byte to its completion
  std::vector<double> done_s_;     ///< per instance, with an observer only: when it completed
  std::vector<double> wire_rank0_;
  std::vector<topo::LinkId> route_;
  collectives::StageRoute stage_;  ///< the stage being launched (kept for its capacity)
  /// Only links that routing reads need to show a collective's earlier hops while its later ones are routed.
  const collectives::OnHop hold_hop_ = [this](const topo::LinkId* links, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
      if (links[i] >= first_load_read_link_) network_.hold(links + i, 1);
  };
  std::vector<ReadyLaunch> ready_;  ///< collectives and transfers to launch at the end of this instant
  const FlowNetwork::Scheduler schedule_flow_ = [this](double t, FlowId f, std::uint32_t v) {
    push(t, EventType::FlowDone, f, v);
  };
  std::vector<bool> observed_;
  std::vector<std::vector<PostRecord>> post_;
};

}  // namespace

runtime::RunResult FastRuntime::run(const runtime::Job& job, const std::function<bool(Rank)>& observe,
                                    const runtime::OpObserver& observer) {
  auto start = std::chrono::steady_clock::now();
  Simulation sim(topology_, job, options_, observe, observer);
  auto result = sim.run();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace exasim::flow
