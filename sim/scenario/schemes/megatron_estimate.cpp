// The analytic estimate of a Megatron configuration for `exasim tune` (docs/tune.md, "The Megatron
// estimate"). Its stages run different streams and its pipeline bubbles come from the ranks waiting on
// each other, so the one-rank replay (AnalyticMachine::replay_s) prices only what one micro-batch costs on
// one stage, and closed forms assemble the iteration. A probe plan with pp = dp = 1 (the configuration's
// tp, micro-batch, sequence parallelism and recomputation) is replayed at 1 and 2 layers and 1 and 2
// micro-batches, and T(l, m) = a + b l + c m + d l m solved for d (one layer's forward, recomputation and
// backward with its TP collectives, and with context parallelism its attention steps and their K/V
// exchange over CP, kept in the probe), c (the embedding, LM head and loss of a micro-batch), b and a (the
// optimizer per layer and for the embedding). Then, with Lp = L / pp layers on a stage, v virtual stages
// and m micro-batches:
//   stage    = d Lp + c + ZeRO's per-micro-batch traffic (ZeRO 2/3 reduce-scatters per layer, blocking,
//              or with overlap.dp exposed past the chunk's backward; ZeRO 3 all-gathers per layer ahead
//              of its forward and backward, exposed past the previous layer's compute, in backward
//              past its blocking reduce-scatter too: the simulation routes the two apart)
//   pipeline = (m + (pp - 1) / v) stage + 2 (v m + pp - 1) hop    (the bubble (pp - 1) / (v m) of a stage)
//   hop      = the activation's Send over the pp ring (split over TP with scatter-gather, then its TP
//              all-gather), and the tied embedding's exchange once
//   flush    = the DP reduction of the stage's gradients (ZeRO 0: all-reduce; 1: reduce-scatter; with
//              overlap.dp exposed past the last micro-batch's backward), ZeRO 1/2's parameter all-gather,
//              and the optimizer (b Lp + a, over dp with ZeRO >= 1).
// The TP ring is (stride 1, size tp), the CP ring (stride tp, size cp), the DP ring (stride tp, size
// dp cp: the gradient reduction's group), the pp ring (stride tp cp dp, size pp); the pipeline's tensors
// hold seq/cp tokens.
//
// LIMITATIONS: the busiest stage pays both the embedding and the LM head (c); the backward's share of a
// layer (what overlaps ZeRO's traffic) is a fixed 2/3 (3/4 with full recomputation); ZeRO 3 gathers of the
// embedding and head are left out; p2p transfers are never overlapped with compute (as the plan).

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schemes/megatron_scheme.hpp"
#include "sim/schedule/megatron.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace exasim::scenario {

namespace {

/// The backward's share of a layer's forward, recomputation and backward (what overlaps ZeRO's
/// traffic): backward costs about twice the forward; full recomputation adds one forward before it.
double backward_share(schedule::Recompute recompute) {
  return recompute == schedule::Recompute::Full ? 3.0 / 4.0 : 2.0 / 3.0;
}

class MegatronEstimate final : public SchemeEstimate {
 public:
  void prepare(const Scenario& s, AnalyticMachine& machine) override {
    const auto& c = parallel_as<schedule::MegatronConfig>(s);
    (void)machine.ring_of(1, c.tp);
    (void)machine.ring_of(c.tp, c.dp_cp());
    (void)machine.ring_of(c.tp * c.dp_cp(), c.pp);
    (void)probe(s, machine);
  }
  double iteration_s(const Scenario& s, AnalyticMachine& machine) override;

 private:
  /// T(l, m) = fixed + per_layer l + per_micro_batch m + per_layer_micro_batch l m, as the header says.
  struct Probe {
    double fixed_s = 0, per_layer_s = 0, per_micro_batch_s = 0, per_layer_micro_batch_s = 0;
  };
  /// Memoised per (tp, micro_batch, sequence_parallel, recompute, cp, cp_comm): one estimate per base
  /// scenario.
  const Probe& probe(const Scenario& s, AnalyticMachine& machine);
  std::map<std::tuple<std::uint32_t, std::uint32_t, bool, int, std::uint32_t, int>, Probe> probes_;
};

const MegatronEstimate::Probe& MegatronEstimate::probe(const Scenario& s, AnalyticMachine& machine) {
  const auto& c = parallel_as<schedule::MegatronConfig>(s);
  const auto key = std::make_tuple(c.tp, c.micro_batch, c.sequence_parallel && c.tp > 1,
                                   static_cast<int>(s.training.recompute), c.cp, static_cast<int>(c.cp_comm));
  if (auto it = probes_.find(key); it != probes_.end()) return it->second;
  schedule::MegatronConfig alone = c;  // one stage, one data-parallel rank, the CP group kept
  alone.pp = alone.dp = alone.virtual_stages = 1;
  alone.zero = 0;
  auto model = s.model;
  auto training = s.training;
  // With cp > 1 the probe's data-parallel dimension is its CP group (dp x cp ranks with dp = 1): its
  // gradient all-reduce, blocking after the flush with overlap.dp off, is taken out of each replay (the
  // iteration adds the real reduction over dp x cp). With cp = 1 the probe has no DP collective at all.
  auto overlap = s.overlap;
  overlap.dp = false;
  const double layer_params = s.model.layer_params() / c.tp;
  const double vocab_params =
      (s.model.tied_embeddings ? 1 : 2) * static_cast<double>((s.model.vocab + c.tp - 1) / c.tp) * s.model.hidden;
  auto time = [&](std::int64_t layers, std::int64_t micro_batches) {
    model.layers = layers;
    training.global_batch = micro_batches * c.micro_batch;
    const double t = machine.replay_s(schedule::build_megatron_plan(model, alone, training, overlap));
    if (c.cp == 1) return t;
    const double reduced = s.training.dp_grad_bytes * (static_cast<double>(layers) * layer_params + vocab_params);
    return t - machine.collective_s(schedule::CollKind::AllReduce, c.tp, c.cp, reduced);
  };
  const double t11 = time(1, 1), t21 = time(2, 1), t12 = time(1, 2), t22 = time(2, 2);
  Probe p;
  p.per_layer_micro_batch_s = t22 - t21 - t12 + t11;
  p.per_micro_batch_s = t12 - t11 - p.per_layer_micro_batch_s;
  p.per_layer_s = t21 - t11 - p.per_layer_micro_batch_s;
  p.fixed_s = t11 - p.per_layer_s - p.per_micro_batch_s - p.per_layer_micro_batch_s;
  return probes_.emplace(key, p).first->second;
}

double MegatronEstimate::iteration_s(const Scenario& s, AnalyticMachine& machine) {
  using schedule::CollKind;
  const auto& c = parallel_as<schedule::MegatronConfig>(s);
  const auto& probe_s = probe(s, machine);
  const auto pp_ring = machine.ring_of(c.tp * c.dp_cp(), c.pp);
  const auto on_tp = [&](CollKind kind, double bytes) { return machine.collective_s(kind, 1, c.tp, bytes); };
  const auto on_dp = [&](CollKind kind, double bytes) { return machine.collective_s(kind, c.tp, c.dp_cp(), bytes); };
  const double pp = c.pp, v = c.virtual_stages;
  const double stage_layers = static_cast<double>(s.model.layers) / pp;
  const auto micro_batches = static_cast<double>(schedule::megatron_micro_batches(c, s.training));
  const double e = s.training.element_bytes(), grad_bytes = s.training.dp_grad_bytes;
  const double layer_params = s.model.layer_params() / c.tp;
  const double embedding_params =
      static_cast<double>((s.model.vocab + c.tp - 1) / c.tp) * static_cast<double>(s.model.hidden);
  const double d = probe_s.per_layer_micro_batch_s, backward = backward_share(s.training.recompute);

  // One micro-batch's forward and backward on the busiest stage, ZeRO's per-micro-batch traffic included.
  double stage = d * stage_layers + probe_s.per_micro_batch_s;
  // ZeRO 2/3 reduce-scatter each layer's gradients; blocking ones are on the stage's critical path.
  const double rs = c.zero >= 2 ? on_dp(CollKind::ReduceScatter, grad_bytes * layer_params) : 0;
  const double blocking_rs = s.overlap.dp ? 0 : rs;
  if (c.zero >= 2) {
    const double chunk_layers = stage_layers / v;
    stage += s.overlap.dp ? v * std::max(rs, chunk_layers * (rs - backward * d)) : stage_layers * rs;
  }
  if (c.zero == 3) {
    // Each layer's gather runs under the previous layer's forward, or under its backward and blocking
    // reduce-scatter: the simulation routes the two collectives' flows apart, so they do not share.
    const double ag = on_dp(CollKind::AllGather, e * layer_params);
    stage += 2 * v * ag + (stage_layers - v) *
                              (std::max(0.0, ag - (1 - backward) * d) + std::max(0.0, ag - backward * d - blocking_rs));
  }
  double t = (micro_batches + (pp - 1) / v) * stage;
  if (c.pp > 1) {
    const bool sp = c.sequence_parallel && c.tp > 1, split = c.scatter_gather && !sp && c.tp > 1;
    const double full = e * static_cast<double>(c.micro_batch * (s.model.seq_len / c.cp) * s.model.hidden);
    double hop = pp_ring.step_latency_s + full / (sp ? c.tp : 1) / (split ? c.tp : 1) / pp_ring.bandwidth_Bps;
    if (split) hop += on_tp(CollKind::AllGather, full);
    t += 2 * (v * micro_batches + pp - 1) * hop;
    if (s.model.tied_embeddings) t += pp_ring.step_latency_s + grad_bytes * embedding_params / pp_ring.bandwidth_Bps;
  }
  // After the flush: the DP reduction of the stage's gradients, the parameter all-gather, the optimizer.
  const double vocab_matrices = s.model.tied_embeddings || c.pp > 1 ? 1 : 2;
  const double stage_params = stage_layers * layer_params + vocab_matrices * embedding_params;
  if (c.zero <= 1) {
    const double r = on_dp(c.zero == 1 ? CollKind::ReduceScatter : CollKind::AllReduce, grad_bytes * stage_params);
    t += s.overlap.dp ? std::max(r / (stage_layers + 1), r - backward * d * stage_layers) : r;
  }
  if (c.zero == 1 || c.zero == 2) t += on_dp(CollKind::AllGather, e * stage_params);
  t += (probe_s.per_layer_s * stage_layers + probe_s.fixed_s) / (c.zero >= 1 ? c.dp_cp() : 1);
  return t;
}

}  // namespace

std::unique_ptr<SchemeEstimate> make_megatron_estimate() { return std::make_unique<MegatronEstimate>(); }

}  // namespace exasim::scenario
