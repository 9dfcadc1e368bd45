#include "sim/flow/fast_runtime.hpp"

#include "sim/exec/executor_impl.hpp"
#include "sim/flow/flow_network.hpp"
#include "sim/flow/internal/event_queue.hpp"
#include "sim/flow/nic_mirrors.hpp"
#include "sim/flow/prediction_heap.hpp"
#include "sim/runtime/link_meter.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <unordered_map>

namespace exasim::flow {

namespace {

using runtime::Rank;

/// A timer of the execution core (time and order from the EventQueue: time, then insertion) or a
/// flow's end (from the PredictionHeaps, which hold only live predictions).
enum class EventType : std::uint8_t { ComputeDone, StageLatencyDone, FlowDone };

struct Event {
  std::uint32_t id;
  EventType type;
};

/// Whether a bundle of the group of rank r along d may cross GPU-GPU links together with network links.
/// A ring's bundle joins member k to member k + 1; a tree's (when the job may run trees: `tree` or
/// `auto`) joins members in any pairs its two trees make, so any two members count. Hierarchical
/// stages never mix: one bundle per node, or one per local index between nodes.
bool group_mixes(const topo::Topology& topo, const runtime::Job& job, std::size_t d, Rank r, bool trees) {
  const auto& grid = job.plan->grid;
  const std::uint32_t p = grid.dim(d).size;
  const auto node = [&](std::uint32_t k) { return topo.node_of(job.gpu(grid.group_member(r, d, k))); };
  bool inside = false, between = false;
  for (std::uint32_t k = 0; k < p; ++k)
    for (std::uint32_t j = k + 1; j < (trees ? p : k + 2); ++j) (node(k) == node(j % p) ? inside : between) = true;
  return inside && between;
}

/// The node layout for FlowNetwork's node-local flows, or none where a bundle mixes hops inside a node
/// with hops between nodes: it would cross GPU-GPU links together with network links, and node-local
/// flows must then be solved with the network (a Megatron data-parallel ring over two GPUs of each
/// node, say). Every ring of the 4D plans in the scale benchmark stays inside a node or leaves it at
/// every hop.
NodeLayout node_layout(const topo::Topology& topo, const runtime::Job& job) {
  const auto& grid = job.plan->grid;
  // Trees, NCCL's rings (node-major, rotated per channel) and direct exchanges may join any two members;
  // so do all-to-alls, whatever the algorithm (router.hpp).
  const bool trees = collectives::joins_any_members(job.collective_algorithm);
  const std::vector<bool> exchanges = all_to_all_dims(*job.plan);
  for (std::size_t d = 0; d < grid.dims().size(); ++d) {
    if (grid.dim(d).size < 3) continue;  // two members: every hop joins the same pair of GPUs
    for (Rank r = 0; r < grid.world_size(); ++r)
      if (grid.coord(r, d) == 0 && group_mixes(topo, job, d, r, trees || exchanges[d])) return {};
  }
  return {topo.node_count(), topo.links_per_node(), topo.gpus_per_node()};
}

/// Events this close after an instant's first are handled in that instant. Flows that finish together
/// in exact arithmetic (symmetric rings) can come out a few ulps apart, in an order that depends on
/// how the solver summed; adaptive routing, which reads the load when a flow launches, would turn
/// that order into other routes. One nanosecond (SimGrid's default timing precision) is far above
/// rounding and far below any latency the models produce.
constexpr double kInstant_s = 1e-9;

/// The fast network backend: FlowNetwork's max-min flows and an EventQueue of timers and predicted
/// flow ends, driving the execution core one instant at a time. The core is compiled against this
/// class (exec::BasicExecutor<FastNetwork>): its calls into the backend, one or more per event, are
/// direct and inline rather than virtual (measured: the virtual core cost 5-10 % at 32k GCDs).
class FastNetwork final : public exec::NetworkBackend {
 public:
  using Core = exec::BasicExecutor<FastNetwork>;

  FastNetwork(const topo::Topology& topo, const runtime::Job& job, const FastOptions& options)
      : network_(topo.links(), options.solver, node_layout(topo, job)),
        progress_(options.progress),
        reverse_instants_(options.reverse_instants) {
    if (options.meter_links) meter_.emplace(topo.links().size());
    network_.set_sleeping(FlowNetwork::Sleeping::Auto);  // on where re-solves cascade (flow_network.hpp)
    // Only links that routing reads need to show a collective's earlier hops while its later ones are routed.
    network_.set_first_held(topo.first_load_read_link());
    if (options.mirror_nics && options.solver != Solver::Reference && options.router == nullptr) {
      const auto pairs = mirrored_nic_pairs(topo, job);
      if (!pairs.empty()) network_.set_mirrored(pairs);
    }
  }

  void start_timer(double delay_s, exec::TimerKind kind, std::uint32_t id) override {
    queue_.push(now_ + delay_s,
                Event{id, kind == exec::TimerKind::Compute ? EventType::ComputeDone : EventType::StageLatencyDone});
  }
  void start_flow(std::span<const topo::LinkId> route, double bytes, std::uint32_t tag) override {
    const FlowId id = network_.add(route, bytes, tag);
    if (meter_) {
      meter_->flow_started(route, bytes, now_, core_->flow_dim(tag));
      metered_routes_[id].assign(route.begin(), route.end());
    }
  }
  [[nodiscard]] const topo::LinkLoadView* load_view() const override { return &network_; }
  [[nodiscard]] const SolverCounters& counters() const { return network_.counters(); }
  void hold(const topo::LinkId* links, std::size_t count) override { network_.hold(links, count); }

  runtime::RunResult run(Core& core) {
    core_ = &core;
    core.start();
    std::vector<Event> batch;
    while (true) {
      core.launch_ready();
      network_.resolve(now_, schedule_flow_);
      if (queue_.empty() && network_ends_.empty() && node_ends_.empty()) break;
      // Handle every event of this instant (including those it adds at the same time) before
      // re-solving the network once. Handling a flow's end predicts no other (only resolve() does),
      // so the flow ends of the instant can be taken out together.
      now_ = next_time();
      core.set_now(now_);
      const double instant_end = now_ + kInstant_s;
      while (true) {
        if (!queue_.empty() && queue_.next_time() <= instant_end) {
          queue_.pop_instant(batch);
        } else {
          batch.clear();
          while (!network_ends_.empty() && network_ends_.next_time() <= instant_end)
            batch.push_back({network_ends_.pop(), EventType::FlowDone});
          while (!node_ends_.empty() && node_ends_.next_time() <= instant_end)
            batch.push_back({FlowNetwork::kNodeLocal | node_ends_.pop(), EventType::FlowDone});
          if (batch.empty()) break;
        }
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
      if (progress_ && core.events() >= next_progress_check_) report_progress(false);
    }
    if (progress_) report_progress(true);
    auto result = core.finish("fast");
    if (meter_) {
      result.link_bytes = meter_->bytes();
      result.link_busy_s = meter_->busy_s(now_);
      result.link_bytes_by_dim = meter_->bytes_by_dim();
    }
    return result;
  }

 private:
  void prefetch(const Event& e) const {
    switch (e.type) {
      case EventType::ComputeDone: core_->prefetch_rank(e.id); break;
      case EventType::FlowDone: network_.prefetch(e.id); break;
      case EventType::StageLatencyDone: core_->prefetch_instance(e.id); break;
    }
  }

  void handle(const Event& e) {
    switch (e.type) {
      case EventType::ComputeDone: core_->compute_ended(e.id); break;
      case EventType::FlowDone:
        if (meter_) {
          const auto it = metered_routes_.find(e.id);
          meter_->flow_ended(it->second, now_);
          metered_routes_.erase(it);
        }
        core_->flow_ended(static_cast<std::uint32_t>(network_.finish(e.id)));
        break;
      case EventType::StageLatencyDone: core_->stage_ended(e.id); break;
    }
  }

  /// Reports at most 4 times a second, and only once the run has taken 2 s (short runs stay quiet);
  /// the final report comes only if an earlier one did, so a bar that was drawn gets finished.
  void report_progress(bool final) {
    next_progress_check_ = core_->events() + 65536;  // reading the clock every event would cost more than it saves
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (final ? !progress_shown_ : (wall < 2.0 || wall < last_progress_s_ + 0.25)) return;
    last_progress_s_ = wall;
    progress_shown_ = true;
    const double fraction = static_cast<double>(core_->ops_done()) / static_cast<double>(core_->ops_total());
    progress_({final ? 1.0 : fraction, now_, wall, final});
  }

  /// The earliest event: a timer or a flow's end.
  [[nodiscard]] double next_time() const {
    double t = queue_.empty() ? std::numeric_limits<double>::infinity() : queue_.next_time();
    if (!network_ends_.empty()) t = std::min(t, network_ends_.next_time());
    if (!node_ends_.empty()) t = std::min(t, node_ends_.next_time());
    return t;
  }

  FlowNetwork network_;
  EventQueue<Event> queue_;                  ///< timers
  PredictionHeap network_ends_;              ///< by FlowId
  PredictionHeap node_ends_;                 ///< by FlowId without FlowNetwork::kNodeLocal
  std::optional<runtime::LinkMeter> meter_;  ///< only when asked: it keeps every active flow's route
  std::unordered_map<FlowId, std::vector<topo::LinkId>> metered_routes_;
  Core* core_ = nullptr;
  double now_ = 0;

  const ProgressCallback progress_;
  const bool reverse_instants_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::uint64_t next_progress_check_ = 0;
  double last_progress_s_ = 0;
  bool progress_shown_ = false;

  const FlowNetwork::Scheduler schedule_flow_ = [this](double t, FlowId f) {
    if (f & FlowNetwork::kNodeLocal)
      node_ends_.set(f & ~FlowNetwork::kNodeLocal, t);
    else
      network_ends_.set(f, t);
  };
};

}  // namespace

runtime::RunResult FastRuntime::run(const runtime::Job& job, const std::function<bool(Rank)>& observe,
                                    const runtime::OpObserver& observer) {
  auto start = std::chrono::steady_clock::now();
  FastNetwork network(topology_, job, options_);
  FastNetwork::Core core(topology_, job, network, observe, observer,
                         options_.router ? *options_.router : exec::default_router());
  auto result = network.run(core);
  if (options_.counters != nullptr) *options_.counters = network.counters();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace exasim::flow
