#include "sim/schedule/memory.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::schedule {

namespace {

constexpr double kWeightBytes = 2;      // bf16
constexpr double kGradientBytes = 2;    // bf16
constexpr double kOptimizerBytes = 12;  // fp32 master + Adam m + v
constexpr double kLogitBytes = 6;       // fp32 logits + their bf16 gradient, per local vocabulary entry
constexpr double kRuntimeReserveBytes = 1.5e9;  // estimate: context, BLAS workspace, collective buffers
constexpr double kFragmentation = 0.10;         // estimate: caching-allocator slack on everything else
// Gradient elements reduced at once: DeepSpeed's default reduce_bucket_size (5e8); a bucket never spans
// more than one layer in our plans.
constexpr double kBucketElements = 5e8;

/// Everything but the runtime reserve and fragmentation is computed by the caller.
MemoryEstimate finish(MemoryEstimate e, double transient_bytes) {
  const double resident = e.weights + e.gradients + e.optimizer + e.activations + transient_bytes;
  e.workspace = transient_bytes + kRuntimeReserveBytes + kFragmentation * resident;
  return e;
}

/// Chunk-micro-batches a stage has run forward but not backward at its peak (pipeline_schedule.hpp).
std::int64_t in_flight(const MegatronConfig& c, std::int64_t micro_batches, std::uint32_t stage) {
  const std::int64_t p = c.pp, s = stage, v = c.virtual_stages;
  if (v == 1) return std::min(micro_batches, p - s);
  const std::int64_t total = micro_batches * v;
  if (micro_batches == p) return total;
  return std::min(total, 2 * (p - s - 1) + (v - 1) * p + 1);
}

}  // namespace

MemoryEstimate estimate_axonn4d_memory(const ModelSpec& m, const Axonn4DConfig& g, const TrainingSpec& t) {
  if (auto bad = axonn4d_infeasibility(m, g, t.global_batch); !bad.why.empty())
    throw std::invalid_argument("axonn4d memory: " + bad.why);
  const double H = static_cast<double>(m.hidden), L = static_cast<double>(m.layers), V = static_cast<double>(m.vocab);
  const double gx = g.gx, gy = g.gy, gz = g.gz;
  const double params = L * 12 * H * H / (gx * gy * gz) + V * H / (gx * gy);  // embedding not sharded over z
  const double batch = static_cast<double>(t.global_batch / (std::int64_t{g.gdata} * g.gz));
  const double tokens = batch * static_cast<double>(m.seq_len);

  MemoryEstimate e;
  e.weights = kWeightBytes * params;
  e.gradients = kGradientBytes * params;
  e.optimizer = kOptimizerBytes * params;
  const double full_layer = tokens * H * (10 / gx + 24 / gy);
  e.activations = t.full_recompute() ? L * 2 * tokens * H / gx + full_layer : L * full_layer;
  const double gathered = 2 * kWeightBytes * 4 * H * H / (gx * gy);  // current + prefetched MLP block (OAG)
  const double logits = kLogitBytes * tokens * V / (gx * gy);
  const double bucket = t.dp_grad_bytes * std::min(kBucketElements, 12 * H * H / (gx * gy * gz));  // one layer
  return finish(e, gathered + logits + bucket);
}

MemoryEstimate estimate_megatron_stage_memory(const ModelSpec& m, const MegatronConfig& c, const TrainingSpec& t,
                                              std::uint32_t stage) {
  if (auto bad = megatron_infeasibility(m, c, t, c.gpus()); !bad.why.empty())
    throw std::invalid_argument("megatron memory: " + bad.field + ": " + bad.why);
  if (stage >= c.pp) throw std::invalid_argument("megatron memory: stage out of range");
  const double H = static_cast<double>(m.hidden), tp = c.tp, dp = c.dp;
  const bool sp = c.sequence_parallel && c.tp > 1;
  const bool first = stage == 0, last = stage + 1 == c.pp;
  const std::int64_t layers_per_chunk = m.layers / (std::int64_t{c.pp} * c.virtual_stages);
  const double stage_layers = static_cast<double>(layers_per_chunk) * c.virtual_stages;
  const double layer_params = 12 * H * H / tp;
  const double local_vocab = static_cast<double>((m.vocab + c.tp - 1) / c.tp);
  const double embedding = local_vocab * H;
  const double params = stage_layers * layer_params + (first ? embedding : 0) + (last && c.pp > 1 ? embedding : 0);
  const double tokens = static_cast<double>(c.micro_batch) * static_cast<double>(m.seq_len);

  MemoryEstimate e;
  e.weights = kWeightBytes * params / (c.zero >= 3 ? dp : 1);
  e.gradients = kGradientBytes * params / (c.zero >= 2 ? dp : 1);
  e.optimizer = kOptimizerBytes * params / (c.zero >= 1 ? dp : 1);
  const double full_layer = sp ? tokens * H * 34 / tp : tokens * H * (10 + 24 / tp);
  const double kept_layers = static_cast<double>(in_flight(c, megatron_micro_batches(c, t), stage) * layers_per_chunk);
  e.activations = t.full_recompute() ? kept_layers * 2 * tokens * H / (sp ? tp : 1) + full_layer : kept_layers * full_layer;

  double transient = t.dp_grad_bytes * std::min(kBucketElements, layer_params);  // one gradient bucket in flight
  if (c.zero >= 3) transient += 2 * kWeightBytes * layer_params;     // gathered layer + the prefetched one
  if (last) transient += kLogitBytes * tokens * local_vocab;
  return finish(e, transient);
}

MemoryEstimate estimate_megatron_memory(const ModelSpec& m, const MegatronConfig& c, const TrainingSpec& t) {
  MemoryEstimate worst = estimate_megatron_stage_memory(m, c, t, 0);
  // Stages in between hold fewer activations and no embedding: only the last can exceed the first.
  if (c.pp > 1) {
    MemoryEstimate tail = estimate_megatron_stage_memory(m, c, t, c.pp - 1);
    if (tail.total() > worst.total()) worst = tail;
  }
  return worst;
}

}  // namespace exasim::schedule
