#include "sim/simgrid/internal/actor_simulation.hpp"

#include "sim/exec/executor.hpp"
#include "sim/runtime/link_meter.hpp"
#include "sim/simgrid/internal/topology_zone.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>

namespace exasim::sg {

namespace {

namespace s4u = simgrid::s4u;
using runtime::Rank;

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

/// Stack of a worker actor (the start actor keeps SimGrid's default): it runs the execution core's handlers (routing
/// included), never deep. A small stack matters: with guard-size 0 SimGrid zeroes every stack it allocates, and a
/// reused 8 MiB stack is 8 MiB of memset per actor. ASan's larger frames get more.
#ifdef __SANITIZE_ADDRESS__
constexpr unsigned kWorkerStack_bytes = 1024 * 1024;
#else
constexpr unsigned kWorkerStack_bytes = 128 * 1024;
#endif

double now() { return s4u::Engine::get_clock(); }

/// Something the core asked SimGrid to do: sleep (a timer) or move bytes (a flow).
struct Task {
  bool flow = false;
  exec::TimerKind timer{};
  std::uint32_t id = 0;  ///< timer: its id; flow: its tag
  double delay_s = 0;
  std::uint64_t bytes = 0;
  std::vector<topo::LinkId> route;
};

/// SimGrid as the core's network: each timer is a sleep and each flow one SimGrid communication over
/// exactly the route the core chose (queued in the TopologyZone), carried by worker actors. A worker
/// does its task, reports its end to the core, then carries on with the first task the core started in
/// response and hands each other one to an idle worker (or a new one): a rank's kernels and a
/// collective's stages mostly stay on one actor. When no worker has a task left, nothing can happen
/// any more: the idle ones are stopped and the engine returns (a deadlock shows in the core's finish()).
class SimgridNetwork final : public exec::NetworkBackend, public topo::LinkLoadView {
 public:
  SimgridNetwork(const topo::Topology& topo, bool meter_links)
      : load_(topo.links().size(), 0), held_(topo.links().size(), 0), flow_dst_(topo.gpu_count() > 1 ? 1 : 0) {
    if (meter_links) meter_.emplace(topo.links().size());
  }

  void start_timer(double delay_s, exec::TimerKind kind, std::uint32_t id) override {
    issued_.push_back({false, kind, id, delay_s, 0, {}});
  }
  void start_flow(std::span<const topo::LinkId> route, double bytes, std::uint32_t tag) override {
    for (const topo::LinkId l : route) {  // as FlowNetwork::add(): a held entry becomes a flow entry
      if (held_[l] > 0) --held_[l];
      ++load_[l];
    }
    if (meter_) meter_->flow_started(route, bytes, now(), core_->flow_dim(tag));
    issued_.push_back({true, {}, tag, 0, whole_bytes(bytes), {route.begin(), route.end()}});
  }
  [[nodiscard]] const topo::LinkLoadView* load_view() const override { return this; }
  void hold(const topo::LinkId* links, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) ++held_[links[i]];
  }
  [[nodiscard]] double load(topo::LinkId link) const override { return load_[link] + held_[link]; }

  runtime::RunResult run(exec::Executor& core, TopologyZone& zone) {
    core_ = &core;
    zone_ = &zone;
    Worker& first = workers_.emplace_back();
    ++busy_;
    s4u::Actor::create("start", zone.host(0), [this, &first] {
      guarded([&] {
        core_->start();
        core_->launch_ready();
      });
      work(first);
    });
    s4u::Engine::get_instance()->run();
    if (!failure_.empty()) throw std::logic_error(failure_);
    auto result = core.finish("simgrid");
    if (meter_) {
      result.link_bytes = meter_->bytes();
      result.link_busy_s = meter_->busy_s(now());
      result.link_bytes_by_dim = meter_->bytes_by_dim();
    }
    return result;
  }

 private:
  struct Worker {
    s4u::SemaphorePtr wake = s4u::Semaphore::create(0);
    Task task;
    bool stop = false;
  };

  /// An exception must not leave an actor (SimGrid would abort the process): keep the first one and
  /// let the simulation drain; run() rethrows it.
  template <class F>
  void guarded(F&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      if (failure_.empty()) failure_ = e.what();
    }
  }

  /// A worker's life after its first handler: tasks the last handler issued, else idle until handed one.
  void work(Worker& w) {
    while (true) {
      if (failure_.empty() && !issued_.empty()) {
        std::vector<Task> tasks = std::move(issued_);
        issued_.clear();
        for (std::size_t i = 1; i < tasks.size(); ++i) hand_out(std::move(tasks[i]));
        w.task = std::move(tasks.front());
        run_task(w.task);
        continue;
      }
      if (--busy_ == 0) {  // no timer, no flow anywhere: the run is over
        for (Worker* idle : idle_) {
          idle->stop = true;
          idle->wake->release();
        }
        idle_.clear();
        return;
      }
      idle_.push_back(&w);
      w.wake->acquire();
      if (w.stop) return;
      run_task(w.task);
    }
  }

  void hand_out(Task task) {
    ++busy_;
    if (!idle_.empty()) {
      Worker* w = idle_.back();
      idle_.pop_back();
      w->task = std::move(task);
      w->wake->release();
      return;
    }
    Worker& w = workers_.emplace_back();
    w.task = std::move(task);
    s4u::Actor::init("worker", zone_->host(0))->set_stacksize(kWorkerStack_bytes)->start([this, &w] {
      run_task(w.task);
      work(w);
    });
  }

  void run_task(const Task& task) {
    if (!failure_.empty()) return;
    if (!task.flow) {
      s4u::this_actor::sleep_for(task.delay_s);
    } else if (task.bytes > 0) {  // SimGrid never starts an empty communication (feasibility §5.6)
      // Hosts do not matter (CM02 bounds a communication by its links only): every flow runs between
      // the same two, and the zone hands it the route queued just before (FIFO per host pair).
      zone_->queue_route(0, flow_dst_, task.route);
      s4u::Comm::sendto(zone_->host(0), zone_->host(flow_dst_), task.bytes);
    }
    guarded([&] {
      if (task.flow) {
        for (const topo::LinkId l : task.route) --load_[l];
        if (meter_) meter_->flow_ended(task.route, now());
      }
      core_->set_now(now());
      if (task.flow)
        core_->flow_ended(task.id);
      else
        core_->timer_ended(task.timer, task.id);
    });
    // Launch only once every event of this instant has been handled, as the fast core does: the
    // actors that SimGrid wakes at one date all run before any yielded one runs again, so the first
    // to come back routes the collectives that became ready with every end of the instant already
    // counted in the loads (adaptive routing reads them), and the others find nothing left to launch.
    s4u::this_actor::yield();
    guarded([&] { core_->launch_ready(); });
  }

  static std::uint64_t whole_bytes(double bytes) {
    if (bytes <= 0) return 0;
    return std::max<std::uint64_t>(1, std::llround(bytes));
  }

  exec::Executor* core_ = nullptr;
  TopologyZone* zone_ = nullptr;
  std::vector<double> load_;  ///< flow entries per link, for adaptive routing
  std::vector<double> held_;  ///< hold()s not yet taken by a flow
  std::optional<runtime::LinkMeter> meter_;
  const topo::GpuId flow_dst_;
  std::vector<Task> issued_;    ///< by the core during the handler running now
  std::deque<Worker> workers_;  ///< stable addresses: actors hold references
  std::vector<Worker*> idle_;
  std::uint32_t busy_ = 0;  ///< workers with a task (sleeping, communicating or handling)
  std::string failure_;
};

}  // namespace

runtime::RunResult simulate_in_this_process(const topo::Topology& topology, const runtime::Job& job,
                                            const std::function<bool(Rank)>& observe, std::vector<ObservedOp>& observed,
                                            bool verbose, const exec::StageRouter& router, bool meter_links) {
  static std::atomic<bool> used{false};
  if (used.exchange(true))
    throw std::logic_error("SimGrid can run one simulation per process (use SimgridOptions::fork)");
  if (job.plan->grid.world_size() > topology.gpu_count())
    throw std::invalid_argument("plan needs " + std::to_string(job.plan->grid.world_size()) +
                                " GPUs, the machine has " + std::to_string(topology.gpu_count()));

  auto args = engine_arguments(verbose);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  // Never deleted: SimGrid's engine is process-global and cannot be re-created once torn down.
  new s4u::Engine(&argc, argv.data());

  TopologyZone* zone = TopologyZone::create(topology, /*report_latency=*/false);
  SimgridNetwork network(topology, meter_links);
  runtime::OpObserver record;
  if (observe)
    record = [&observed](Rank r, std::uint32_t op, double t0, double t1) { observed.push_back({r, op, t0, t1}); };
  exec::Executor core(topology, job, network, observe, record, router);
  return network.run(core, *zone);
}

}  // namespace exasim::sg
