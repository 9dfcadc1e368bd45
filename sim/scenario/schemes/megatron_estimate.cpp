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
// A mixture of experts (moe_iteration_s): the probes run with ep = 1 (every expert local, the expert GEMMs
// at the mean load), once with every layer a MoE layer and once dense where the model mixes them; the
// busiest stage is the one whose layers cost most; each MoE layer adds per micro-batch its 4 all-to-alls
// (6 with full recomputation) on the ep ring (stride etp, size ep), the busiest rank receiving ep x its
// share of S; the flush reduces dense gradients over dp x cp and expert gradients over the edp ring (stride
// etp x ep); the probe's optimizer per layer is scaled by the parameters a GPU really holds.
//
// LIMITATIONS: the busiest stage pays both the embedding and the LM head (c); the backward's share of a
// layer (what overlaps ZeRO's traffic) is a fixed 2/3 (3/4 with full recomputation); ZeRO 3 gathers of the
// embedding and head are left out; p2p transfers are never overlapped with compute (as the plan); a
// mixture of experts' expert GEMMs are priced at the mean load whatever the skew, and at ep = 1 shapes.

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schemes/megatron_scheme.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/moe.hpp"

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
    if (s.model.moe.enabled()) {
      (void)machine.ring_of(c.expert_tp(), c.ep);
      (void)machine.ring_of(c.expert_tp() * c.ep, c.tp * c.dp_cp() / (c.expert_tp() * c.ep));
      (void)probe(s, machine, LayerKind::Moe);
      if (mixes_layers(s.model)) (void)probe(s, machine, LayerKind::Dense);
    } else {
      (void)probe(s, machine);
    }
  }
  double iteration_s(const Scenario& s, AnalyticMachine& machine) override;

 private:
  /// T(l, m) = fixed + per_layer l + per_micro_batch m + per_layer_micro_batch l m, as the header says.
  struct Probe {
    double fixed_s = 0, per_layer_s = 0, per_micro_batch_s = 0, per_layer_micro_batch_s = 0;
  };
  /// Which layers a probe's model has: the scenario's, or a mixture of experts' MoE or dense ones alone.
  enum class LayerKind : std::uint8_t { AsModel, Moe, Dense };
  /// Memoised per (tp, micro_batch, sequence_parallel, recompute, layer kind, etp, cp, cp_comm): one
  /// estimate per base scenario.
  const Probe& probe(const Scenario& s, AnalyticMachine& machine, LayerKind kind = LayerKind::AsModel);
  double moe_iteration_s(const Scenario& s, AnalyticMachine& machine);
  static bool mixes_layers(const schedule::ModelSpec& m) {
    return m.moe.first_dense_layers > 0 || m.moe.layer_freq > 1;
  }
  std::map<std::tuple<std::uint32_t, std::uint32_t, bool, int, int, std::uint32_t, std::uint32_t, int>, Probe> probes_;
};

const MegatronEstimate::Probe& MegatronEstimate::probe(const Scenario& s, AnalyticMachine& machine, LayerKind kind) {
  const auto& c = parallel_as<schedule::MegatronConfig>(s);
  const auto key =
      std::make_tuple(c.tp, c.micro_batch, c.sequence_parallel && c.tp > 1, static_cast<int>(s.training.recompute),
                      static_cast<int>(kind), c.etp, c.cp, static_cast<int>(c.cp_comm));
  if (auto it = probes_.find(key); it != probes_.end()) return it->second;
  schedule::MegatronConfig alone = c;  // one stage, one data-parallel rank, the CP group kept
  alone.pp = alone.dp = alone.virtual_stages = 1;
  alone.zero = 0;
  alone.ep = 1;
  auto model = s.model;
  if (kind == LayerKind::Moe) {
    model.moe.first_dense_layers = 0;
    model.moe.layer_freq = 1;
  } else if (kind == LayerKind::Dense) {
    model.moe = {};
    alone.etp = 0;
  }
  auto training = s.training;
  // With cp > 1 the probe's data-parallel dimension is its CP group (dp x cp ranks with dp = 1): its
  // gradient all-reduce, blocking after the flush with overlap.dp off, is taken out of each replay (the
  // iteration adds the real reduction over dp x cp). With cp = 1 the probe has no DP collective at all.
  auto overlap = s.overlap;
  overlap.dp = false;
  // A MoE probe layer's weights: attention and shared experts over TP with the router whole, reduced over
  // the CP group; every routed expert over etp, reduced over the expert data-parallel ranks (tp cp / etp).
  const bool moe_probe = model.moe.enabled();
  const double router = moe_probe ? static_cast<double>(model.hidden * model.moe.experts) : 0;
  const double layer_params =
      moe_probe ? (model.moe_dense_params() - router) / c.tp + router : model.layer_params() / c.tp;
  const std::uint32_t etp = alone.expert_tp();
  const double expert_params = moe_probe ? static_cast<double>(model.moe.experts) * model.expert_params() / etp : 0;
  const double vocab_params =
      (s.model.tied_embeddings ? 1 : 2) * static_cast<double>((s.model.vocab + c.tp - 1) / c.tp) * s.model.hidden;
  auto time = [&](std::int64_t layers, std::int64_t micro_batches) {
    model.layers = layers;
    training.global_batch = micro_batches * c.micro_batch;
    const double t = machine.replay_s(schedule::build_megatron_plan(model, alone, training, overlap));
    if (c.cp == 1) return t;
    const double g = s.training.dp_grad_bytes, l = static_cast<double>(layers);
    const double experts =
        moe_probe ? machine.collective_s(schedule::CollKind::AllReduce, etp, c.tp * c.cp / etp, g * l * expert_params)
                  : 0;
    return t - experts -
           machine.collective_s(schedule::CollKind::AllReduce, c.tp, c.cp, g * (l * layer_params + vocab_params));
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
  if (s.model.moe.enabled()) return moe_iteration_s(s, machine);
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

double MegatronEstimate::moe_iteration_s(const Scenario& s, AnalyticMachine& machine) {
  using schedule::CollKind;
  const auto& c = parallel_as<schedule::MegatronConfig>(s);
  const auto& m = s.model;
  const Probe& moe = probe(s, machine, LayerKind::Moe);
  const Probe& dense = mixes_layers(m) ? probe(s, machine, LayerKind::Dense) : moe;
  const std::uint32_t etp = c.expert_tp(), edp = c.tp * c.dp_cp() / (etp * c.ep);
  const auto on_dp = [&](CollKind kind, double bytes) { return machine.collective_s(kind, c.tp, c.dp_cp(), bytes); };
  const auto on_edp = [&](CollKind kind, double bytes) { return machine.collective_s(kind, etp * c.ep, edp, bytes); };
  const double pp = c.pp, v = c.virtual_stages, tp = c.tp;
  const auto micro_batches = static_cast<double>(schedule::megatron_micro_batches(c, s.training));
  const double e = s.training.element_bytes(), grad_bytes = s.training.dp_grad_bytes;
  const double backward = backward_share(s.training.recompute);

  // One micro-batch's all-to-alls of a MoE layer: S = n top_k h e, the busiest rank receiving ep x its share.
  const bool sp = c.sequence_parallel && c.tp > 1;
  const double routed = static_cast<double>(c.micro_batch * (m.seq_len / c.cp)) / (sp ? tp : 1);
  const auto routing = schedule::route_experts(m.moe, c.ep);
  const double hottest = *std::max_element(routing.rank_share.begin(), routing.rank_share.end());
  const double S = routed * static_cast<double>(m.moe.top_k * m.hidden) * e;
  const double exchanges = s.training.full_recompute() ? 6 : 4;
  const double a2a = exchanges * machine.collective_s(CollKind::AllToAll, etp, c.ep, S * c.ep * hottest);

  // Per layer on this GPU: reduced over dp (dense) and over edp (experts); the probe held every expert.
  const double router = static_cast<double>(m.hidden * m.moe.experts);
  const double moe_dense = (m.moe_dense_params() - router) / tp + router, dense_layer = m.layer_params() / tp;
  const double experts_probe = static_cast<double>(m.moe.experts) * m.expert_params() / etp;
  const double experts_real = experts_probe / c.ep;
  const double zero_dp = c.zero >= 1 ? c.dp_cp() : 1, zero_edp = c.zero >= 1 ? edp : 1;
  const double moe_optimizer_scale = (moe_dense / zero_dp + experts_real / zero_edp) / (moe_dense + experts_probe);

  // The busiest stage: its layers' forward and backward, and what its flush and optimizer cost.
  const std::int64_t per_chunk = m.layers / (std::int64_t{c.pp} * c.virtual_stages);
  double stage = 0, dense_params = 0, expert_params = 0, optimizer = 0;
  for (std::uint32_t st = 0; st < c.pp; ++st) {
    double work = 0, dp_params = 0, edp_params = 0, opt = 0;
    for (std::uint32_t chunk = 0; chunk < c.virtual_stages; ++chunk)
      for (std::int64_t i = 0; i < per_chunk; ++i) {
        const std::int64_t layer = (std::int64_t{chunk} * c.pp + st) * per_chunk + i;
        const bool routed_layer = m.moe.is_moe_layer(layer);
        work += routed_layer ? moe.per_layer_micro_batch_s + a2a : dense.per_layer_micro_batch_s;
        dp_params += routed_layer ? moe_dense : dense_layer;
        edp_params += routed_layer ? experts_real : 0;
        opt += routed_layer ? moe.per_layer_s * moe_optimizer_scale : dense.per_layer_s / zero_dp;
      }
    if (work > stage) {
      stage = work;
      dense_params = dp_params;
      expert_params = edp_params;
      optimizer = opt;
    }
  }
  const double d = stage / (static_cast<double>(m.layers) / pp);  // the busiest stage's mean layer
  stage += moe.per_micro_batch_s;
  double t = (micro_batches + (pp - 1) / v) * stage;
  if (c.pp > 1) {
    const auto pp_ring = machine.ring_of(c.tp * c.dp_cp(), c.pp);
    const double full = e * static_cast<double>(c.micro_batch * (m.seq_len / c.cp) * m.hidden);
    t += 2 * (v * micro_batches + pp - 1) * (pp_ring.step_latency_s + full / (sp ? tp : 1) / pp_ring.bandwidth_Bps);
    const double embedding_params = static_cast<double>((m.vocab + c.tp - 1) / c.tp) * static_cast<double>(m.hidden);
    if (m.tied_embeddings) t += pp_ring.step_latency_s + grad_bytes * embedding_params / pp_ring.bandwidth_Bps;
  }
  const double vocab = static_cast<double>((m.vocab + c.tp - 1) / c.tp) * static_cast<double>(m.hidden);
  dense_params += (m.tied_embeddings || c.pp > 1 ? 1 : 2) * vocab;
  const CollKind reduce = c.zero == 1 ? CollKind::ReduceScatter : CollKind::AllReduce;
  const double r = on_dp(reduce, grad_bytes * dense_params) + on_edp(reduce, grad_bytes * expert_params);
  const double stage_layers = static_cast<double>(m.layers) / pp;
  t += s.overlap.dp ? std::max(r / (stage_layers + 1), r - backward * d * stage_layers) : r;
  if (c.zero == 1) t += on_dp(CollKind::AllGather, e * dense_params) + on_edp(CollKind::AllGather, e * expert_params);
  return t + optimizer + moe.fixed_s / zero_dp;
}

}  // namespace

std::unique_ptr<SchemeEstimate> make_megatron_estimate() { return std::make_unique<MegatronEstimate>(); }

}  // namespace exasim::scenario
