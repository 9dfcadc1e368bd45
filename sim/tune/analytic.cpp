#include "sim/tune/analytic.hpp"

#include "sim/gpu/device_loader.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/megatron.hpp"

#include <algorithm>
#include <limits>

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
      algorithm_(base.collective_algorithm),
      nccl_profile_(base.machine.nccl_profile) {}

AnalyticModel::~AnalyticModel() = default;

RingLink AnalyticModel::ring(std::uint32_t stride, std::uint32_t size) {
  const auto key = std::make_pair(stride, size);
  auto it = rings_.find(key);
  if (it == rings_.end()) {
    RingLink link = route_ring(*topology_, gpu_of_rank_, ranks_, stride, size, step_overhead_s_);
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
  const auto cost = collectives::analytic_cost(link.algorithm, kind, p, bytes,
                                               {link.bandwidth_Bps, link.step_latency_s, link.nccl, &link.nccl_inputs});
  return {cost.bandwidth_s, cost.latency_s};
}

RingLink route_ring(const topo::Topology& topo, const std::vector<std::uint32_t>& gpu_of_rank, std::uint32_t ranks,
                    std::uint32_t stride, std::uint32_t size, double step_overhead_s) {
  RingLink out;
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

double AnalyticModel::iteration_s(const scenario::Scenario& s) {
  if (s.scheme == scenario::SchemeId::Megatron) return megatron_iteration_s(s);
  auto model = s.model;
  const std::int64_t layers = model.layers;
  auto time_with = [&](std::int64_t l) {
    model.layers = l;
    return replay_s(schedule::build_axonn4d_plan(model, s.axonn, s.training, s.overlap));
  };
  if (layers <= 2) return time_with(layers);
  const double t1 = time_with(1), t2 = time_with(2);
  return t2 + static_cast<double>(layers - 2) * (t2 - t1);
}

namespace {

/// A collective of `kind` over `p` members of `ring` on an S-byte buffer (collective_cost).
double collective_s(schedule::CollKind kind, std::uint32_t p, double bytes, const RingLink& ring) {
  const CollectiveCost c = collective_cost(kind, p, bytes, ring);
  return c.bandwidth_s + c.latency_s;
}

/// The backward's share of a layer's forward, recomputation and backward (what overlaps ZeRO's
/// traffic): backward costs about twice the forward; full recomputation adds one forward before it.
double backward_share(schedule::Recompute recompute) {
  return recompute == schedule::Recompute::Full ? 3.0 / 4.0 : 2.0 / 3.0;
}

}  // namespace

const AnalyticModel::MegatronProbe& AnalyticModel::megatron_probe(const scenario::Scenario& s) {
  const auto& c = s.megatron;
  const auto key =
      std::make_tuple(c.tp, c.micro_batch, c.sequence_parallel && c.tp > 1, static_cast<int>(s.training.recompute));
  if (auto it = probes_.find(key); it != probes_.end()) return it->second;
  schedule::MegatronConfig probe = c;
  probe.pp = probe.dp = probe.virtual_stages = 1;
  probe.zero = 0;
  auto model = s.model;
  auto training = s.training;
  auto time = [&](std::int64_t layers, std::int64_t micro_batches) {
    model.layers = layers;
    training.global_batch = micro_batches * c.micro_batch;
    return replay_s(schedule::build_megatron_plan(model, probe, training, s.overlap));
  };
  const double t11 = time(1, 1), t21 = time(2, 1), t12 = time(1, 2), t22 = time(2, 2);
  MegatronProbe p;
  p.per_layer_micro_batch_s = t22 - t21 - t12 + t11;
  p.per_micro_batch_s = t12 - t11 - p.per_layer_micro_batch_s;
  p.per_layer_s = t21 - t11 - p.per_layer_micro_batch_s;
  p.fixed_s = t11 - p.per_layer_s - p.per_micro_batch_s - p.per_layer_micro_batch_s;
  return probes_.emplace(key, p).first->second;
}

void AnalyticModel::prepare_megatron(const scenario::Scenario& s) {
  const auto& c = s.megatron;
  (void)ring(1, c.tp);
  (void)ring(c.tp, c.dp);
  (void)ring(c.tp * c.dp, c.pp);
  (void)megatron_probe(s);
}

double AnalyticModel::megatron_iteration_s(const scenario::Scenario& s) {
  using schedule::CollKind;
  const auto& c = s.megatron;
  const auto& probe = megatron_probe(s);
  const RingLink tp_ring = ring(1, c.tp), dp_ring = ring(c.tp, c.dp), pp_ring = ring(c.tp * c.dp, c.pp);
  const double pp = c.pp, v = c.virtual_stages;
  const double stage_layers = static_cast<double>(s.model.layers) / pp;
  const auto micro_batches = static_cast<double>(schedule::megatron_micro_batches(c, s.training));
  const double e = s.training.element_bytes(), grad_bytes = s.training.dp_grad_bytes;
  const double layer_params = s.model.layer_params() / c.tp;
  const double embedding_params =
      static_cast<double>((s.model.vocab + c.tp - 1) / c.tp) * static_cast<double>(s.model.hidden);
  const double d = probe.per_layer_micro_batch_s, backward = backward_share(s.training.recompute);

  // One micro-batch's forward and backward on the busiest stage, ZeRO's per-micro-batch traffic included.
  double stage = d * stage_layers + probe.per_micro_batch_s;
  // ZeRO 2/3 reduce-scatter each layer's gradients; blocking ones are on the stage's critical path.
  const double rs = c.zero >= 2 ? collective_s(CollKind::ReduceScatter, c.dp, grad_bytes * layer_params, dp_ring) : 0;
  const double blocking_rs = s.overlap.dp ? 0 : rs;
  if (c.zero >= 2) {
    const double chunk_layers = stage_layers / v;
    stage += s.overlap.dp ? v * std::max(rs, chunk_layers * (rs - backward * d)) : stage_layers * rs;
  }
  if (c.zero == 3) {
    // Each layer's gather runs under the previous layer's forward, or under its backward and blocking
    // reduce-scatter: the simulation routes the two collectives' flows apart, so they do not share.
    const double ag = collective_s(CollKind::AllGather, c.dp, e * layer_params, dp_ring);
    stage += 2 * v * ag + (stage_layers - v) *
                              (std::max(0.0, ag - (1 - backward) * d) + std::max(0.0, ag - backward * d - blocking_rs));
  }
  double t = (micro_batches + (pp - 1) / v) * stage;
  if (c.pp > 1) {
    const bool sp = c.sequence_parallel && c.tp > 1, split = c.scatter_gather && !sp && c.tp > 1;
    const double full = e * static_cast<double>(c.micro_batch * s.model.seq_len * s.model.hidden);
    double hop = pp_ring.step_latency_s + full / (sp ? c.tp : 1) / (split ? c.tp : 1) / pp_ring.bandwidth_Bps;
    if (split) hop += collective_s(CollKind::AllGather, c.tp, full, tp_ring);
    t += 2 * (v * micro_batches + pp - 1) * hop;
    if (s.model.tied_embeddings) t += pp_ring.step_latency_s + grad_bytes * embedding_params / pp_ring.bandwidth_Bps;
  }
  // After the flush: the DP reduction of the stage's gradients, the parameter all-gather, the optimizer.
  const double vocab_matrices = s.model.tied_embeddings || c.pp > 1 ? 1 : 2;
  const double stage_params = stage_layers * layer_params + vocab_matrices * embedding_params;
  if (c.zero <= 1) {
    const double r = collective_s(c.zero == 1 ? CollKind::ReduceScatter : CollKind::AllReduce, c.dp,
                                  grad_bytes * stage_params, dp_ring);
    t += s.overlap.dp ? std::max(r / (stage_layers + 1), r - backward * d * stage_layers) : r;
  }
  if (c.zero == 1 || c.zero == 2) t += collective_s(CollKind::AllGather, c.dp, e * stage_params, dp_ring);
  t += (probe.per_layer_s * stage_layers + probe.fixed_s) / (c.zero >= 1 ? c.dp : 1);
  return t;
}

}  // namespace exasim::tune
