#pragma once
// The execution core's definitions (executor.hpp), for the translation units that compile it against a
// backend: executor.cpp for exec::Executor (any NetworkBackend, through virtual calls), and a backend
// that compiles it against its own final class so that the calls per event are direct and inline
// (sim/flow/fast_runtime.cpp). Include nowhere else.

#include "sim/exec/executor.hpp"

#include "sim/collectives/flow_key.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::exec {

template <class Network>
BasicExecutor<Network>::BasicExecutor(const topo::Topology& topology, const runtime::Job& job, Network& backend,
                                      const std::function<bool(Rank)>& observe, const runtime::OpObserver& observer,
                                      const StageRouter& router)
    : topo_(topology),
      job_(job),
      plan_(*job.plan),
      grid_(plan_.grid),
      dims_(grid_.dims().size()),
      world_(grid_.world_size()),
      backend_(backend),
      observer_(observer),
      router_(router),
      load_(backend.load_view()) {
  if (world_ > topology.gpu_count())
    throw std::invalid_argument("plan needs " + std::to_string(world_) + " GPUs, the machine has " +
                                std::to_string(topology.gpu_count()));
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
  if (job_.compute_slowdown_beside_comm > 0) {
    in_flight_.assign(world_, 0);
    overlap_since_.assign(world_, -1.0);
    owed_s_.assign(world_, 0.0);
    slowed_s_.assign(world_, 0.0);
    slowing_.assign(world_, 0);
  }
  for (Rank r = 0; r < world_; ++r) ops_total_ += ops_of(r).size();
  for (const auto& stream : plan_.streams) {
    runs_.push_back(compute_runs(stream.ops));
    double total = 0;
    for (const schedule::Op& op : stream.ops)
      if (op.type == schedule::OpType::Compute) total += job_.kernel_time_s[op.kernel];
    stream_compute_s_.push_back(total);
  }
  if (observer_) {
    observed_.assign(world_, false);
    for (Rank r = 0; r < world_; ++r) observed_[r] = observe && observe(r);
    post_.resize(world_);
  }
}

template <class Network>
std::vector<typename BasicExecutor<Network>::ComputeRun> BasicExecutor<Network>::compute_runs(
    const std::vector<schedule::Op>& ops) const {
  std::vector<ComputeRun> runs(ops.size());
  for (std::size_t i = ops.size(); i-- > 0;) {
    if (ops[i].type != schedule::OpType::Compute) continue;
    const bool continues = i + 1 < ops.size() && ops[i + 1].type == schedule::OpType::Compute;
    runs[i].end = continues ? runs[i + 1].end : static_cast<std::uint32_t>(i + 1);
    runs[i].time_s = job_.kernel_time_s[ops[i].kernel] + (continues ? runs[i + 1].time_s : 0.0);
  }
  return runs;
}

template <class Network>
void BasicExecutor<Network>::start() {
  for (Rank r = 0; r < world_; ++r) advance(r);
}

template <class Network>
void BasicExecutor<Network>::overlap_ends(Rank r) {
  if (overlap_since_[r] < 0) return;
  owed_s_[r] += (now_ - overlap_since_[r]) * job_.compute_slowdown_beside_comm;
  overlap_since_[r] = -1;
}

/// A rank posts only between compute runs, so a post never starts an overlap: the next run does.
template <class Network>
void BasicExecutor<Network>::comm_started(Rank r) {
  if (!in_flight_.empty()) ++in_flight_[r];
}

template <class Network>
void BasicExecutor<Network>::comm_ended(Rank r) {
  if (in_flight_.empty()) return;
  if (--in_flight_[r] == 0) overlap_ends(r);
}

template <class Network>
bool BasicExecutor<Network>::wait_slowdown(Rank r) {
  if (in_flight_.empty()) return false;
  if (slowing_[r] != 0) {  // the slowdown has been waited
    slowing_[r] = 0;
    return false;
  }
  overlap_ends(r);
  // The run's timer let its kernels progress at full rate; over the O seconds they overlapped they did
  // O x f / (1 + f) less work than that. What is left runs at the slowed rate while communication goes
  // on (f x O more seconds), at full rate once it has ended (f x O / (1 + f)).
  const double f = job_.compute_slowdown_beside_comm;
  const double wait_s = in_flight_[r] > 0 ? owed_s_[r] : owed_s_[r] / (1 + f);
  owed_s_[r] = 0;
  if (!(wait_s > 0)) return false;
  slowed_s_[r] += wait_s;
  slowing_[r] = 1;
  backend_.start_timer(wait_s, TimerKind::Compute, r);
  return true;
}

template <class Network>
void BasicExecutor<Network>::compute_ended(Rank r) {
  ++events_;
  if (wait_slowdown(r)) return;
  // The whole run of kernels ended: each counts as an event, as if timed one by one.
  const std::uint32_t end = run_of(r)[pc_[r]].end;
  if (observed(r)) {
    // Each kernel from the run's start on, by the same additions a timer per kernel would have made;
    // the last ends where the run did. Observed or not, a run is one timer: tracing must not add
    // events, which would split or merge the fast core's instants and move the answer.
    const auto& ops = ops_of(r);
    double t = since_[r];
    for (std::uint32_t k = pc_[r]; k < end; ++k) {
      const double kernel_s = job_.kernel_time_s[ops[k].kernel] * job_.compute_factor(r);
      const double kernel_end = k + 1 == end ? now_ : std::min(now_, t + kernel_s);
      report(r, k, t, kernel_end);
      t = kernel_end;
    }
  }
  events_ += end - pc_[r] - 1;
  ops_done_ += end - pc_[r];
  pc_[r] = end;
  advance(r);
}

template <class Network>
void BasicExecutor<Network>::flow_ended(std::uint32_t tag) {
  ++events_;
  if (tag & kOneOfSeveral) {
    tag &= ~kOneOfSeveral;
    if (--bundles_left_[tag] > 0) return;
  }
  backend_.start_timer(stage_latency_s_[tag], TimerKind::StageLatency, tag);
}

template <class Network>
void BasicExecutor<Network>::stage_ended(InstanceId id) {
  ++events_;
  if (--instances_[id].stages_left > 0) {  // routed at launch_ready(), in launch order
    const LaterStages& later = later_stages_[id];
    defer_launch(id, later.group, later.sequence, false);
    return;
  }
  complete(id);
}

/// Runs rank r from its program counter until it computes, blocks or ends.
template <class Network>
void BasicExecutor<Network>::advance(Rank r) {
  const auto& ops = ops_of(r);
  while (pc_[r] < ops.size()) {
    const schedule::Op& op = ops[pc_[r]];
    switch (op.type) {
      case schedule::OpType::Compute:
        // A rank runs consecutive kernels as one timer: nothing else can happen to it in between
        // (compute does not depend on the network), so only the run's end matters.
        if (observed(r)) since_[r] = now_;  // only a trace needs the start of the run
        if (!in_flight_.empty() && in_flight_[r] > 0) overlap_since_[r] = now_;
        backend_.start_timer(run_of(r)[pc_[r]].time_s * job_.compute_factor(r), TimerKind::Compute, r);
        return;
      case schedule::OpType::CollStart:
        post(r, op);
        next_op(r);
        break;
      case schedule::OpType::Wait: {
        Instance& inst = instances_[slot(r, op.slot)];
        if (!inst.done) {
          since_[r] = now_;
          append_linked(inst.first_waiter, inst.last_waiter, next_waiter_, r);
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

template <class Network>
void BasicExecutor<Network>::post(Rank r, const schedule::Op& op) {
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
  comm_started(r);
  Instance& inst = instances_[id];
  if (inst.kind != op.coll || inst.bytes != op.bytes)
    throw std::logic_error("plan mismatch: group members posted different collectives at " + plan_.names[op.name]);
  if (++inst.posted == p) {  // collective k is the oldest open one: members post in the same order
    --group.open;
    ++group.base;
    if (!group.running || !job_.collectives_in_post_order) {
      group.running = true;
      defer_launch(id, group_id, group.started++, false);
    } else {  // the group's communicator is busy: after the collectives before it
      append_linked(group.queue_head, group.queue_tail, queued_next_, id);
    }
  }
}

/// Doubles every group's ring of open collective ids, each id moving to its place in the larger ring.
template <class Network>
void BasicExecutor<Network>::grow_open_rings() {
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
template <class Network>
void BasicExecutor<Network>::post_p2p(Rank r, const schedule::Op& op) {
  const Rank partner = schedule::p2p_partner(grid_, r, op);
  if (partner == r) throw std::logic_error("plan error: send/recv to itself at " + plan_.names[op.name]);
  const bool is_send = op.coll == schedule::CollKind::Send;
  const Rank sender = is_send ? r : partner, receiver = is_send ? partner : r;
  PairState& pair = pairs_[(std::uint64_t{sender} << 32) | receiver];
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
  comm_started(r);
  if (!in_flight_.empty()) receiver_[id] = receiver;
}

template <class Network>
void BasicExecutor<Network>::launch_ready() {
  if (ready_.empty()) return;
  if (!std::is_sorted(ready_.begin(), ready_.end())) std::sort(ready_.begin(), ready_.end());
  // Launches of one instant are instances all over the table: ask for a few ahead.
  constexpr std::size_t kAhead = 4;
  for (std::size_t i = 0; i < std::min(kAhead, ready_.size()); ++i) prefetch_instance(ready_[i].id);
  for (std::size_t i = 0; i < ready_.size(); ++i) {
    if (i + kAhead < ready_.size()) prefetch_instance(ready_[i + kAhead].id);
    const ReadyLaunch& l = ready_[i];
    const auto sequence = static_cast<std::uint32_t>(l.names & 0xffffffffu);
    if (l.first & 0x100u)
      launch_p2p(l.id, static_cast<Rank>(l.names >> 32), sequence);
    else
      launch_stage(l.id, static_cast<std::uint32_t>(l.names >> 32), sequence);
  }
  ready_.clear();
}

/// Both sides posted: one flow from sender to receiver, then one route latency. `sequence`: the pair's
/// count of earlier transfers, for the flow key.
template <class Network>
void BasicExecutor<Network>::launch_p2p(InstanceId id, Rank receiver, std::uint32_t sequence) {
  Instance& inst = instances_[id];
  route_.clear();
  const std::uint64_t flow_key = collectives::p2p_flow_key(job_.seed, inst.first_member, receiver, sequence);
  const double latency_s =
      topo_.route_with_latency(job_.gpu(inst.first_member), job_.gpu(receiver), flow_key, load_, route_);
  inst.stages_left = 1;
  stage_latency_s_[id] = latency_s + job_.collective_step_overhead_s;
  if (inst.first_member == 0) wire_rank0_[inst.dim] += inst.bytes;
  ++flows_;
  backend_.start_flow(route_, inst.bytes, id);
}

/// Routes the next stage of a collective (collectives/router.hpp, through router_) and starts its
/// bundles. `sequence`: the group's count of earlier collectives along this dimension, for flow keys.
template <class Network>
void BasicExecutor<Network>::launch_stage(InstanceId id, std::uint32_t group_id, std::uint32_t sequence) {
  Instance& inst = instances_[id];
  const auto call = runtime::group_call(job_, inst.first_member, inst.dim, group_id, sequence, inst.kind, inst.bytes);
  collectives::Algorithm algorithm;
  std::uint32_t stage = 0;
  if (inst.stages_left == 0) {  // the first stage
    algorithm = router_.resolve(job_.collective_algorithm, topo_, call);
    const std::uint32_t stages = router_.stage_count(algorithm, topo_, call);
    if (stages == 0 || stages > 255) throw std::logic_error("router: a collective needs 1 to 255 stages");
    inst.stages_left = static_cast<std::uint8_t>(stages);
    if (stages > 1) later_stages_[id] = {group_id, sequence, static_cast<std::uint8_t>(stages), algorithm};
  } else {
    const LaterStages& later = later_stages_[id];
    algorithm = later.algorithm;
    stage = later.stages - inst.stages_left;
  }
  const std::uint8_t dim = inst.dim;  // routing below may not move instances_, but keep no reference
  router_.route_stage(algorithm, topo_, call, stage, load_, hold_hop_, stage_);
  wire_rank0_[dim] += stage_.rank0_wire_bytes;
  stage_latency_s_[id] = stage_.latency_s;
  flows_ += stage_.bundles.size();
  std::uint32_t tag = id;
  if (stage_.bundles.size() > 1) {
    bundles_left_[id] = static_cast<std::uint32_t>(stage_.bundles.size());
    tag |= kOneOfSeveral;
  }
  // Start every bundle before any can end (a backend may report flow_ended() from start_flow()).
  const double bytes_per_byte = 1 / stage_.bandwidth_scale;  // 1 unless a calibrated StepCost row applies
  for (const auto& b : stage_.bundles)
    backend_.start_flow({stage_.links.data() + b.begin, b.count}, b.bytes * bytes_per_byte, tag);
  if (stage_.bundles.empty()) backend_.start_timer(stage_.latency_s, TimerKind::StageLatency, id);
}

template <class Network>
void BasicExecutor<Network>::complete(InstanceId id) {
  Instance& inst = instances_[id];
  inst.done = true;
  if (observer_) done_s_[id] = now_;
  const std::uint8_t dim = inst.dim;
  if (!schedule::is_p2p(inst.kind)) {  // the group's next collective, if one is queued, starts now
    const std::uint32_t group_id = grid_.group_id(inst.first_member, dim);
    GroupState& group = groups_[dim][group_id];
    const InstanceId next = group.queue_head;
    if (next == kNone) {
      group.running = false;
    } else {
      group.queue_head = queued_next_[next];
      if (group.queue_head == kNone) group.queue_tail = kNone;
      defer_launch(next, group_id, group.started++, false);
    }
  }
  if (!in_flight_.empty()) {
    if (schedule::is_p2p(inst.kind)) {
      comm_ended(inst.first_member);
      comm_ended(receiver_[id]);
    } else {
      const std::uint32_t p = grid_.dim(dim).size;
      const std::uint32_t stride = grid_.dim(dim).stride;
      for (std::uint32_t k = 0; k < p; ++k) comm_ended(inst.first_member + k * stride);
    }
  }
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
    const schedule::Op& op = ops_of(r)[pc_[r]];
    exposed_s(r, dim) += now_ - since_[r];
    consume(r, op.slot);
    report(r, pc_[r], since_[r], now_);
    next_op(r);
    advance(r);
    r = next;
  }
}

template <class Network>
void BasicExecutor<Network>::report_post(Rank r, std::uint16_t s, InstanceId id) {
  auto& posts = post_[r];
  auto it = std::find_if(posts.begin(), posts.end(), [&](const PostRecord& p) { return p.slot == s; });
  observer_(r, it->op_index, it->t_s, done_s_[id]);
  posts.erase(it);
}

template <class Network>
InstanceId BasicExecutor<Network>::allocate() {
  if (!free_instances_.empty()) {
    const InstanceId id = free_instances_.back();
    free_instances_.pop_back();
    instances_[id] = Instance{};
    return id;
  }
  if (instances_.size() >= kOneOfSeveral) throw std::length_error("execution core: too many collectives in flight");
  instances_.emplace_back();
  stage_latency_s_.emplace_back();
  bundles_left_.emplace_back();
  later_stages_.emplace_back();
  queued_next_.emplace_back(kNone);
  if (!in_flight_.empty()) receiver_.emplace_back();
  if (observer_) done_s_.push_back(0);
  return static_cast<InstanceId>(instances_.size() - 1);
}

template <class Network>
runtime::RunResult BasicExecutor<Network>::finish(std::string backend) {
  for (Rank r = 0; r < world_; ++r) {
    if (pc_[r] != ops_of(r).size())
      throw std::logic_error("deadlock: rank " + std::to_string(r) + " stuck at op " +
                             plan_.names[ops_of(r)[pc_[r]].name]);
  }
  std::vector<runtime::RankTimes> times(world_);
  for (Rank r = 0; r < world_; ++r) {
    times[r].finish_s = finish_s_[r];
    times[r].slowed_s = slowed_s_.empty() ? 0.0 : slowed_s_[r];
    times[r].compute_s = stream_compute_s_[stream_index(r)] * job_.compute_factor(r) + times[r].slowed_s;
    times[r].exposed_s.resize(dims_);
    for (std::size_t d = 0; d < dims_; ++d) times[r].exposed_s[d] = exposed_s(r, static_cast<std::uint8_t>(d));
  }
  return runtime::finished_run(std::move(backend), plan_, std::move(times), wire_rank0_, events_, flows_);
}

}  // namespace exasim::exec
