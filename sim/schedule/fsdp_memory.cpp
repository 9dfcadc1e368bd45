// The FSDP memory estimate (fsdp.hpp, docs/fsdp.md): memory.hpp's terms for a plan in which every GPU
// holds 1/shard of every parameter and gathers units of the model one (or two) at a time.

#include "sim/schedule/fsdp.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::schedule {

MemoryEstimate estimate_fsdp_memory(const ModelSpec& m, const FsdpConfig& c, const TrainingSpec& t) {
  if (auto bad = fsdp_infeasibility(m, c, t, c.gpus()); !bad.why.empty())
    throw std::invalid_argument("fsdp memory: " + bad.field + ": " + bad.why);
  const double layer = m.layer_params();
  const double vocab = static_cast<double>(m.vocab) * static_cast<double>(m.hidden);  // one V x h matrix
  const double params = m.parameters();
  const double shard = c.shard;

  const ParamBytes pb = param_bytes(t);
  MemoryEstimate e;
  e.weights = pb.weights * params / shard;
  e.gradients = pb.gradients * params / shard;
  e.optimizer = pb.optimizer * params / shard;
  const LayerActivations per_layer = layer_activations(m, t, c.micro_batch, {1, 1});
  e.activations = static_cast<double>(m.layers) * per_layer.kept(t.recompute) + per_layer.working_set(t.recompute);

  // Parameters gathered at once, in the math type. Without resharding every unit stays gathered from its
  // forward to its backward: all of them at the end of the forward. Otherwise the unit being computed and,
  // with prefetch, the next one: a layer beside its neighbour (a layer or an untied vocabulary matrix);
  // a tied root stays gathered throughout, beside them.
  double gathered = 0;
  if (!c.reshard_after_forward) {
    gathered = params;
  } else if (m.tied_embeddings) {
    gathered = vocab + layer * (c.prefetch && m.layers > 1 ? 2 : 1);
  } else {
    gathered = c.prefetch ? layer + std::max(layer, vocab) : std::max(layer, vocab);
  }
  // One unit's unsharded gradient in the reduction type before its reduce-scatter (the largest unit).
  const double largest_unit = std::max(layer, vocab);
  e.buffers = pb.weights * gathered + t.dp_grad_bytes * largest_unit;
  e.logits = logit_bytes(t) * static_cast<double>(c.micro_batch) * static_cast<double>(m.seq_len) *
             static_cast<double>(m.vocab);
  e.runtime = runtime_bytes((c.shard > 1) + (c.replicas > 1));
  e.workspace = e.logits + e.buffers + e.runtime;
  return e;
}

}  // namespace exasim::schedule
