#include "sim/tune/analytic.hpp"

#include "sim/gpu/device_loader.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace exasim::tune {

namespace {

/// Flows on each link, as the load adaptive routing compares (FlowNetwork::load counts flows too).
class FlowCount final : public topo::LinkLoadView {
 public:
  explicit FlowCount(const std::vector<std::uint32_t>& flows) : flows_(flows) {}
  [[nodiscard]] double load(topo::LinkId link) const override { return flows_[link]; }
  [[nodiscard]] const std::uint32_t* dense_loads() const override { return flows_.data(); }

 private:
  const std::vector<std::uint32_t>& flows_;
};

}  // namespace

AnalyticModel::AnalyticModel(const scenario::Scenario& base)
    : topology_(scenario::build_topology(base.machine, base.gpus, base.seed)),
      gpu_(gpu::make_gpu_model(base.machine.gpu_choice)),
      gpu_of_rank_(scenario::place_ranks(base.placement, *topology_, base.gpus)),
      ranks_(base.gpus),
      step_overhead_s_(base.machine.collective_step_overhead_s),
      step_costs_(base.machine.step_costs),
      algorithm_(base.collective_algorithm),
      nccl_profile_(base.machine.nccl_profile) {}

AnalyticModel::~AnalyticModel() = default;

RingLink AnalyticModel::ring(std::uint32_t stride, std::uint32_t size) {
  const auto key = std::make_pair(stride, size);
  auto it = rings_.find(key);
  if (it == rings_.end()) {
    RingLink link = route_ring(*topology_, gpu_of_rank_, ranks_, stride, size, step_overhead_s_, &step_costs_);
    link.algorithm = algorithm_;
    if (algorithm_ == collectives::Algorithm::Nccl && size > 1) {
      // Rank 0's group along a dimension of `size` members `stride` apart, as the tuner sees it.
      const schedule::ProcessGrid grid({{"below", stride}, {"dim", size}, {"above", ranks_ / (stride * size)}});
      collectives::GroupCall call;
      call.grid = &grid;
      call.gpu_of_rank = &gpu_of_rank_;
      call.dim = 1;
      link.nccl = &nccl_profile_;
      link.nccl_inputs = collectives::nccl_inputs(*topology_, call);
    }
    it = rings_.emplace(key, link).first;
  }
  return it->second;
}

CollectiveCost collective_cost(schedule::CollKind kind, std::uint32_t p, double bytes, const RingLink& link) {
  if (p < 2) return {};
  double bandwidth_Bps = link.bandwidth_Bps, step_latency_s = link.step_latency_s;
  if (link.step_costs != nullptr)
    if (const auto* row = collectives::find_step_cost(*link.step_costs, kind, bytes, p)) {
      bandwidth_Bps *= row->bandwidth_scale;
      step_latency_s += row->step_overhead_s - link.step_overhead_s;
    }
  const auto cost = collectives::analytic_cost(link.algorithm, kind, p, bytes,
                                               {bandwidth_Bps, step_latency_s, link.nccl, &link.nccl_inputs});
  return {cost.bandwidth_s, cost.latency_s};
}

RingLink route_ring(const topo::Topology& topo, const std::vector<std::uint32_t>& gpu_of_rank, std::uint32_t ranks,
                    std::uint32_t stride, std::uint32_t size, double step_overhead_s,
                    const std::vector<collectives::StepCost>* step_costs) {
  RingLink out;
  out.step_overhead_s = step_overhead_s;
  out.step_costs = step_costs;
  out.bandwidth_Bps = std::numeric_limits<double>::infinity();
  if (size < 2) return out;
  const auto& links = topo.links();
  auto gpu_of = [&](std::uint32_t rank) { return gpu_of_rank.empty() ? rank : gpu_of_rank[rank]; };
  auto next_of = [&](std::uint32_t rank) {
    const std::uint32_t coord = (rank / stride) % size;
    return rank - coord * stride + ((coord + 1) % size) * stride;
  };
  // Every rank sends to its ring successor along the dimension at once: count the flows on each link.
  std::vector<std::uint32_t> flows(links.size(), 0);
  std::vector<topo::LinkId> routes;       // every rank's route, one after the other
  std::vector<std::size_t> starts = {0};  // flow f's route: [starts[f], starts[f + 1])
  // Routed one after the other with the flows counted so far as the load (the flow core's measure), so
  // adaptive routing spreads them as it would when they start together.
  // Where the topology routes a flow in parts (adaptive_parts), each part is routed and counted on its
  // own, under its own key, and carries 1/parts of the bytes: the flow runs at parts x its slowest part.
  const FlowCount load(flows);
  const std::uint32_t parts = topo.route_parts();
  for (std::uint32_t r = 0; r < ranks; ++r) {
    for (std::uint32_t k = 0; k < parts; ++k) {
      topo.route(gpu_of(r), gpu_of(next_of(r)), r + std::uint64_t{k} * ranks, &load, routes);
      for (auto i = starts.back(); i < routes.size(); ++i) ++flows[routes[i]];
      starts.push_back(routes.size());
    }
  }
  // Each part gets its bottleneck link's equal share; the ring runs at its slowest edge.
  for (std::size_t f = 0; f + 1 < starts.size(); ++f) {
    const auto* route = routes.data() + starts[f];
    const std::size_t hops = starts[f + 1] - starts[f];
    for (std::size_t h = 0; h < hops; ++h)
      out.bandwidth_Bps = std::min(out.bandwidth_Bps, parts * links[route[h]].bandwidth_Bps / flows[route[h]]);
    out.step_latency_s = std::max(out.step_latency_s, topo.latency_s(route, hops) + step_overhead_s);
  }
  return out;
}

namespace {

/// The collectives in flight on one grid dimension, sharing its ring bandwidth equally (processor
/// sharing): each holds the seconds its bytes would take alone; its latency is added when it ends.
class DimensionChannel {
 public:
  void start(double t, std::uint16_t slot, double transfer_s, double latency_s, std::vector<double>& slot_done) {
    advance(t, slot_done);
    active_.push_back({slot, transfer_s, latency_s});
    slot_done[slot] = kPending;
  }
  /// Moves the channel to time `until` (or until `slot` has finished, when `until` is infinite).
  void advance(double until, std::vector<double>& slot_done, std::uint16_t slot = 0xffff) {
    while (!active_.empty()) {
      const auto n = static_cast<double>(active_.size());
      double least = active_.front().remaining_s;
      for (const auto& a : active_) least = std::min(least, a.remaining_s);
      if (now_ + least * n > until) {
        for (auto& a : active_) a.remaining_s -= (until - now_) / n;
        now_ = until;
        return;
      }
      now_ += least * n;
      bool waited_done = false;
      for (auto& a : active_) {
        a.remaining_s -= least;
        if (a.remaining_s <= 0) {
          slot_done[a.slot] = now_ + a.latency_s;
          waited_done |= a.slot == slot;
        }
      }
      std::erase_if(active_, [](const Active& a) { return a.remaining_s <= 0; });
      if (waited_done) return;
    }
    if (until != kPending) now_ = std::max(now_, until);
  }
  static constexpr double kPending = std::numeric_limits<double>::infinity();

 private:
  struct Active {
    std::uint16_t slot;
    double remaining_s;
    double latency_s;
  };
  std::vector<Active> active_;
  double now_ = 0;
};

}  // namespace

double AnalyticModel::replay_s(const schedule::Plan& plan) {
  std::vector<RingLink> rings;
  for (const auto& dim : plan.grid.dims()) rings.push_back(ring(dim.stride, dim.size));
  return replay_s(plan, rings);
}

double AnalyticModel::replay_s(const schedule::Plan& plan, const std::vector<RingLink>& rings) const {
  const auto& stream = plan.streams.front();
  std::vector<double> kernel_s;
  kernel_s.reserve(plan.kernels.size());
  for (const auto& kernel : plan.kernels) kernel_s.push_back(gpu_->time_s(kernel));

  std::vector<double> slot_done(stream.slots, 0);
  std::vector<std::uint8_t> slot_dim(stream.slots, 0);
  std::vector<DimensionChannel> channels(plan.grid.dims().size());
  double t = 0;
  for (const auto& op : stream.ops) {
    switch (op.type) {
      case schedule::OpType::Compute: t += kernel_s[op.kernel]; break;
      case schedule::OpType::CollStart: {
        const auto p = plan.grid.dim(op.dim).size;
        const auto& link = rings[op.dim];
        slot_dim[op.slot] = op.dim;
        const CollectiveCost cost = collective_cost(op.coll, p, op.bytes, link);
        channels[op.dim].start(t, op.slot, cost.bandwidth_s, cost.latency_s, slot_done);
        break;
      }
      case schedule::OpType::Wait:
        if (slot_done[op.slot] == DimensionChannel::kPending)
          channels[slot_dim[op.slot]].advance(DimensionChannel::kPending, slot_done, op.slot);
        t = std::max(t, slot_done[op.slot]);
        break;
    }
  }
  return t;
}

scenario::SchemeEstimate& AnalyticModel::estimate_of(const scenario::Scheme& entry) {
  auto& estimate = estimates_[&entry];
  if (!estimate) estimate = entry.make_estimate();
  return *estimate;
}

double AnalyticModel::iteration_s(const scenario::Scenario& s) {
  return estimate_of(scenario::scheme_of(s)).iteration_s(s, *this);
}

void AnalyticModel::prepare(const scenario::Scenario& s) { estimate_of(scenario::scheme_of(s)).prepare(s, *this); }

void AnalyticModel::set_placement(std::vector<std::uint32_t> gpu_of_rank) {
  gpu_of_rank_ = std::move(gpu_of_rank);
  rings_.clear();
  estimates_.clear();  // their probes were replayed on the old rings
}

scenario::AnalyticMachine::Ring AnalyticModel::ring_of(std::uint32_t stride, std::uint32_t size) {
  const RingLink link = ring(stride, size);
  return {link.bandwidth_Bps, link.step_latency_s};
}

double AnalyticModel::collective_s(schedule::CollKind kind, std::uint32_t stride, std::uint32_t size, double bytes) {
  const CollectiveCost c = collective_cost(kind, size, bytes, ring(stride, size));
  return c.bandwidth_s + c.latency_s;
}

}  // namespace exasim::tune
