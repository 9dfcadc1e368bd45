#include "sim/simgrid/actor_simulation.hpp"

#include "sim/collectives/flow_key.hpp"
#include "sim/collectives/router.hpp"
#include "sim/simgrid/topology_zone.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace exasim::sg {

namespace {

namespace s4u = simgrid::s4u;
using runtime::Rank;
using schedule::Op;
using schedule::OpType;

/// Engine settings; simgrid_runtime.hpp says why each one.
std::vector<std::string> engine_arguments(bool verbose) {
  std::vector<std::string> args = {
      "exasim-simgrid",
      "--cfg=network/model:CM02",
      "--cfg=network/latency-factor:1.0",
      "--cfg=network/bandwidth-factor:1.0",
      "--cfg=network/weight-S:0.0",
      "--cfg=network/crosstraffic:0",
      "--cfg=network/TCP-gamma:1e15",
#ifdef __SANITIZE_ADDRESS__
      // Under AddressSanitizer (the asan preset) actors run on threads: raw contexts switch stacks
      // behind ASan's back (Debian's SimGrid lacks its fiber annotations), which gives false
      // stack-use-after-return reports. Same simulation, slower.
      "--cfg=contexts/factory:thread",
#else
      "--cfg=contexts/factory:raw",
#endif
      "--cfg=contexts/guard-size:0",
  };
  if (!verbose) {
    args.emplace_back("--log=root.thres:error");
    // A deadlock becomes our own std::logic_error naming the op; SimGrid's report would only repeat it.
    args.emplace_back("--log=ker_engine.app:file:/dev/null");
    args.emplace_back("--log=ker_engine.additivity:off");
  }
  return args;
}

/// Stack of a collective's actor: it only waits and sleeps (rank actors keep SimGrid's default, which
/// costs nothing until touched because they are all allocated fresh at the start).
constexpr unsigned kCollectiveStack_bytes = 128 * 1024;

using InstanceId = std::uint32_t;
constexpr InstanceId kNone = 0xffffffff;

/// One flow: a p2p transfer, or a ring collective as one bundle whose route is every hop's route end
/// to end (src/dst: its first hop's ends). Routed when the collective launches.
struct Hop {
  topo::GpuId src = 0, dst = 0;
  std::uint64_t bytes = 0;
  std::vector<topo::LinkId> route;
};

/// One collective call of one group (or one Send/Recv pair), from the first post to the last Wait.
struct Instance {
  std::uint8_t dim = 0;
  schedule::CollKind kind{};
  double bytes = 0;
  std::uint32_t members = 0;
  std::uint32_t posted = 0;
  std::uint32_t refs = 0;  ///< members that have not consumed it in a Wait yet
  bool done = false;
  double done_s = 0;
  double latency_s = 0;
  std::vector<Hop> hops;      ///< handed to the collective's actor when it launches
  std::vector<Rank> waiters;  ///< members blocked in a Wait on it
};

/// Collectives of one group (or one ordered p2p pair) that not every member has posted yet, oldest
/// first: members post in the same order, so the k-th post of a member belongs to open[k - base].
struct OpenInstances {
  std::deque<InstanceId> open;
  std::uint32_t base = 0;
};

struct PairState {
  OpenInstances instances;
  std::uint32_t sends = 0, recvs = 0;
};

struct PostRecord {
  std::uint16_t slot;
  std::uint32_t op_index;
  double t_s;
};

double now() { return s4u::Engine::get_clock(); }

class ActorSimulation final : public topo::LinkLoadView {
 public:
  ActorSimulation(const topo::Topology& topo, const runtime::Job& job, const std::function<bool(Rank)>& observe,
                  std::vector<ObservedOp>& observed)
      : topo_(topo), job_(job), plan_(*job.plan), grid_(plan_.grid), dims_(grid_.dims().size()),
        world_(grid_.world_size()), observed_ops_(observed) {
    for (const auto& s : plan_.streams) slots_per_rank_ = std::max<std::size_t>(slots_per_rank_, s.slots);
    slot_.assign(std::size_t{world_} * slots_per_rank_, kNone);
    posted_.assign(std::size_t{world_} * dims_, 0);
    times_.assign(world_, runtime::RankTimes{0, 0, std::vector<double>(dims_, 0.0)});
    finished_.assign(world_, false);
    pc_.assign(world_, 0);
    groups_.resize(dims_);
    for (std::size_t d = 0; d < dims_; ++d) groups_[d].resize(world_ / grid_.dim(d).size);
    wire_rank0_.assign(dims_, 0.0);
    load_.assign(topo.links().size(), 0.0);
    observed_.assign(world_, false);
    for (Rank r = 0; r < world_; ++r) observed_[r] = observe && observe(r);
    post_.resize(world_);
  }

  [[nodiscard]] double load(topo::LinkId link) const override { return load_[link]; }

  runtime::RunResult run(TopologyZone& zone) {
    zone_ = &zone;
    semaphores_.reserve(world_);
    for (Rank r = 0; r < world_; ++r) semaphores_.push_back(s4u::Semaphore::create(0));
    for (Rank r = 0; r < world_; ++r)
      s4u::Actor::create("rank" + std::to_string(r), zone.host(job_.gpu(r)), [this, r] { guarded([&] { rank_main(r); }); });
    s4u::Engine::get_instance()->run();
    return finish();
  }

 private:
  /// An exception must not leave an actor (SimGrid would abort the process): keep the first one and
  /// let the simulation drain; finish() rethrows it.
  template <class F> void guarded(F&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      if (failure_.empty()) failure_ = e.what();
    }
  }

  [[nodiscard]] const std::vector<Op>& ops_of(Rank r) const { return plan_.stream_of(r).ops; }
  InstanceId& slot(Rank r, std::uint16_t s) { return slot_[std::size_t{r} * slots_per_rank_ + s]; }

  void rank_main(Rank r) {
    const auto& ops = ops_of(r);
    for (; pc_[r] < ops.size(); ++pc_[r]) {
      const Op& op = ops[pc_[r]];
      switch (op.type) {
        case OpType::Compute: {
          const double t0 = now();
          s4u::this_actor::sleep_for(job_.kernel_time_s[op.kernel]);
          ++events_;
          times_[r].compute_s += now() - t0;
          report(r, pc_[r], t0, now());
          break;
        }
        case OpType::CollStart: post(r, op); break;
        case OpType::Wait: {
          const InstanceId id = slot(r, op.slot);
          const double t0 = now();
          if (!instances_[id].done) {
            instances_[id].waiters.push_back(r);
            semaphores_[r]->acquire();
            times_[r].exposed_s[instances_[id].dim] += now() - t0;
          }
          consume(r, op.slot);
          report(r, pc_[r], t0, now());
          break;
        }
      }
      if (!failure_.empty()) return;
    }
    times_[r].finish_s = now();
    finished_[r] = true;
  }

  InstanceId open_instance(OpenInstances& group, std::uint32_t k, const Op& op, std::uint32_t members) {
    const std::size_t index = k - group.base;
    if (index == group.open.size()) {
      const InstanceId id = allocate();
      Instance& inst = instances_[id];
      inst.dim = op.dim;
      inst.kind = op.coll;
      inst.bytes = op.bytes;
      inst.members = members;
      inst.refs = members;
      group.open.push_back(id);
    }
    return group.open[index];
  }

  void post(Rank r, const Op& op) {
    if (schedule::is_p2p(op.coll)) return post_p2p(r, op);
    const std::uint32_t p = grid_.dim(op.dim).size;
    const std::uint32_t group_id = grid_.group_id(r, op.dim);
    OpenInstances& group = groups_[op.dim][group_id];
    const std::uint32_t k = posted_[std::size_t{r} * dims_ + op.dim]++;
    const InstanceId id = open_instance(group, k, op, p);
    bind(r, op, id);
    if (instances_[id].kind != op.coll || instances_[id].bytes != op.bytes)
      throw std::logic_error("plan mismatch: group members posted different collectives at " + plan_.names[op.name]);
    if (++instances_[id].posted == p) {
      const std::uint32_t sequence = group.base;
      group.open.pop_front();  // the oldest open instance is the first to be fully posted
      ++group.base;
      launch_ring(id, grid_.group_member(r, op.dim, 0), group_id, sequence);
    }
  }

  /// plan.hpp: the partner is `peer` steps along `dim`; the k-th Send a->b meets the k-th Recv at b from a.
  void post_p2p(Rank r, const Op& op) {
    const std::uint32_t size = grid_.dim(op.dim).size;
    const auto offset = static_cast<std::int64_t>(grid_.coord(r, op.dim)) + op.peer;
    const auto coord = static_cast<std::uint32_t>(((offset % size) + size) % size);
    const Rank partner = grid_.group_member(r, op.dim, coord);
    if (partner == r) throw std::logic_error("Send/Recv to itself at " + plan_.names[op.name]);
    const bool send = op.coll == schedule::CollKind::Send;
    const Rank sender = send ? r : partner, receiver = send ? partner : r;
    PairState& pair = pairs_[std::uint64_t{sender} << 32 | receiver];
    const std::uint32_t k = send ? pair.sends++ : pair.recvs++;
    const InstanceId id = open_instance(pair.instances, k, op, 2);
    bind(r, op, id);
    Instance& inst = instances_[id];
    if (inst.dim != op.dim || (inst.posted == 1 && inst.kind == op.coll))
      throw std::logic_error("plan mismatch: Send and Recv do not pair up at " + plan_.names[op.name]);
    if (send) inst.bytes = op.bytes;  // the Send says how much moves
    if (++inst.posted == 2) {
      const std::uint32_t sequence = pair.instances.base;
      pair.instances.open.pop_front();
      ++pair.instances.base;
      Hop hop{job_.gpu(sender), job_.gpu(receiver), whole_bytes(inst.bytes), {}};
      topo_.route(hop.src, hop.dst, collectives::p2p_flow_key(job_.seed, sender, receiver, sequence), this, hop.route);
      const double latency = topo_.latency_s(hop.route);
      if (sender == 0) wire_rank0_[op.dim] += inst.bytes;
      add_load(hop.route, +1);
      inst.hops.push_back(std::move(hop));
      inst.latency_s = schedule::ring_steps(op.coll, 2) * (latency + job_.collective_step_overhead_s);
      start_instance(id, receiver);
    }
  }

  void bind(Rank r, const Op& op, InstanceId id) {
    slot(r, op.slot) = id;
    if (observed_[r]) post_[r].push_back({op.slot, pc_[r], now()});
  }

  /// All members posted: route the collective now (collectives/router.hpp, as the fast core does at
  /// launch) into its bundle flow, whose route is the hops' routes end to end: SimGrid then moves all
  /// hops at one rate, the slowest hop's, as the fast core's bundles do. An actor of its own carries it,
  /// so that the posting rank goes on with its stream. LIMITATIONS (for now): one stage, i.e. ring only.
  void launch_ring(InstanceId id, Rank first, std::uint32_t group_id, std::uint32_t sequence) {
    Instance& inst = instances_[id];
    const auto call = runtime::group_call(job_, first, inst.dim, group_id, sequence, inst.kind, inst.bytes);
    const auto algorithm = collectives::resolve_algorithm(job_.collective_algorithm, topo_, call);
    collectives::StageRoute stage;
    collectives::route_stage(algorithm, topo_, call, 0, this,
                             [this](const topo::LinkId* links, std::size_t count) {
                               add_load(links, count, +1);  // seen by later hops
                             },
                             stage);
    const auto& b = stage.bundles.front();
    Hop bundle{job_.gpu(first), job_.gpu(grid_.group_member(first, inst.dim, 1 % inst.members)), whole_bytes(b.bytes),
               {stage.links.begin() + b.begin, stage.links.begin() + b.begin + b.count}};
    wire_rank0_[inst.dim] += stage.rank0_wire_bytes;
    inst.hops.push_back(std::move(bundle));
    inst.latency_s = stage.latency_s;
    start_instance(id, first);
  }

  void start_instance(InstanceId id, Rank host_rank) {
    flows_ += instances_[id].hops.size();
    // A small stack: with guard-size 0 SimGrid zeroes every stack it allocates, and once a freed 8 MiB
    // stack is reused from the heap that is 8 MiB of memset per collective (2/3 of the run time).
    s4u::Actor::init("coll", zone_->host(job_.gpu(host_rank)))
        ->set_stacksize(kCollectiveStack_bytes)
        ->start([this, id] { guarded([&] { carry(id); }); });
  }

  /// The collective's actor: start its flows, wait for them, pay the latency term, wake the members.
  void carry(InstanceId id) {
    std::vector<Hop> hops = std::move(instances_[id].hops);
    const double latency_s = instances_[id].latency_s;
    std::vector<s4u::CommPtr> comms;
    std::vector<std::size_t> hop_of_comm;
    for (std::size_t h = 0; h < hops.size(); ++h) {
      if (hops[h].bytes == 0) {  // SimGrid never starts an empty communication (feasibility §5.6)
        flow_done(hops[h]);
        continue;
      }
      zone_->queue_route(hops[h].src, hops[h].dst, hops[h].route);
      comms.push_back(s4u::Comm::sendto_async(zone_->host(hops[h].src), zone_->host(hops[h].dst), hops[h].bytes));
      hop_of_comm.push_back(h);
    }
    while (!comms.empty()) {
      const auto i = static_cast<std::size_t>(s4u::Comm::wait_any(comms));
      flow_done(hops[hop_of_comm[i]]);
      comms.erase(comms.begin() + static_cast<std::ptrdiff_t>(i));
      hop_of_comm.erase(hop_of_comm.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (latency_s > 0) s4u::this_actor::sleep_for(latency_s);
    ++events_;
    Instance& inst = instances_[id];
    inst.done = true;
    inst.done_s = now();
    // Releasing yields to other actors, which may allocate instances: no reference to `inst` below.
    const std::vector<Rank> waiters = std::move(inst.waiters);
    inst.waiters.clear();
    for (Rank r : waiters) semaphores_[r]->release();
  }

  void flow_done(const Hop& hop) {
    ++events_;
    add_load(hop.route, -1);
  }

  void add_load(const std::vector<topo::LinkId>& route, double delta) { add_load(route.data(), route.size(), delta); }
  void add_load(const topo::LinkId* links, std::size_t count, double delta) {
    for (std::size_t i = 0; i < count; ++i) load_[links[i]] += delta;
  }

  static std::uint64_t whole_bytes(double bytes) {
    if (bytes <= 0) return 0;
    return std::max<std::uint64_t>(1, std::llround(bytes));
  }

  /// Rank r is done with the collective in `s` (its Wait returned).
  void consume(Rank r, std::uint16_t s) {
    const InstanceId id = slot(r, s);
    Instance& inst = instances_[id];
    if (observed_[r]) {
      auto& posts = post_[r];
      auto it = std::find_if(posts.begin(), posts.end(), [&](const PostRecord& p) { return p.slot == s; });
      observed_ops_.push_back({r, it->op_index, it->t_s, inst.done_s});
      posts.erase(it);
    }
    slot(r, s) = kNone;
    if (--inst.refs == 0) free_.push_back(id);
  }

  InstanceId allocate() {
    if (!free_.empty()) {
      const InstanceId id = free_.back();
      free_.pop_back();
      instances_[id] = Instance{};
      return id;
    }
    instances_.emplace_back();
    return static_cast<InstanceId>(instances_.size() - 1);
  }

  void report(Rank r, std::uint32_t op_index, double t0, double t1) {
    if (observed_[r]) observed_ops_.push_back({r, op_index, t0, t1});
  }

  runtime::RunResult finish() {
    if (!failure_.empty()) throw std::logic_error(failure_);
    for (Rank r = 0; r < world_; ++r) {
      if (!finished_[r])
        throw std::logic_error("deadlock: rank " + std::to_string(r) + " stuck at op " +
                               plan_.names[ops_of(r)[pc_[r]].name]);
    }
    return runtime::finished_run("simgrid", plan_, std::move(times_), wire_rank0_, events_, flows_);
  }

  const topo::Topology& topo_;
  const runtime::Job& job_;
  const schedule::Plan& plan_;
  const schedule::ProcessGrid& grid_;
  const std::size_t dims_;
  const Rank world_;
  std::vector<ObservedOp>& observed_ops_;
  TopologyZone* zone_ = nullptr;

  std::size_t slots_per_rank_ = 0;
  std::vector<std::uint32_t> pc_;
  std::vector<InstanceId> slot_;        ///< per rank and handle slot
  std::vector<std::uint32_t> posted_;   ///< per rank and dimension: collectives posted so far
  std::vector<runtime::RankTimes> times_;
  std::vector<bool> finished_;
  std::vector<s4u::SemaphorePtr> semaphores_;  ///< per rank: released when the instance it waits for completes
  std::vector<std::vector<OpenInstances>> groups_;
  std::unordered_map<std::uint64_t, PairState> pairs_;  ///< (sender << 32 | receiver)
  std::vector<Instance> instances_;
  std::vector<InstanceId> free_;
  std::vector<double> load_;  ///< active flows per link, for adaptive routing
  std::vector<double> wire_rank0_;
  std::vector<bool> observed_;
  std::vector<std::vector<PostRecord>> post_;
  std::uint64_t events_ = 0;
  std::uint64_t flows_ = 0;
  std::string failure_;
};

}  // namespace

runtime::RunResult simulate_in_this_process(const topo::Topology& topology, const runtime::Job& job,
                                            const std::function<bool(Rank)>& observe, std::vector<ObservedOp>& observed,
                                            bool verbose) {
  static std::atomic<bool> used{false};
  if (used.exchange(true))
    throw std::logic_error("SimGrid can run one simulation per process (use SimgridOptions::fork)");
  if (job.plan->grid.world_size() > topology.gpu_count())
    throw std::invalid_argument("plan needs " + std::to_string(job.plan->grid.world_size()) + " GPUs, the machine has " +
                                std::to_string(topology.gpu_count()));

  auto args = engine_arguments(verbose);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  // Never deleted: SimGrid's engine is process-global and cannot be re-created once torn down.
  new s4u::Engine(&argc, argv.data());

  TopologyZone* zone = TopologyZone::create(topology, /*report_latency=*/false);
  ActorSimulation simulation(topology, job, observe, observed);
  return simulation.run(*zone);
}

}  // namespace exasim::sg
