#include "sim/schedule/memory.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace exasim::schedule {

namespace {

constexpr double kSoftmaxStatBytes = 4;
// Megatron-Core's router keeps its top-k probabilities in fp32 (a dense tokens x experts tensor).
constexpr double kRouterProbabilityBytes = 4;  // flash attention's log-sum-exp per row is fp32 (flash-attn, TE)
// Megatron-core's vocab-parallel cross-entropy (tensor_parallel/cross_entropy.py) upcasts the logits to fp32
// (calculate_logits_max: .float()) while the caller still holds the 16-bit ones, then subtracts the max,
// exponentiates and normalises in place and saves that fp32 softmax; its backward writes the gradient into
// the saved tensor in place and the .float()'s backward casts it to the math type. Either peak holds one
// fp32 and one math-type copy: 4 + e B per token per local vocabulary entry. In fp32 training .float()
// returns the same tensor and there is no cast: 4 B.
constexpr double kLossLogitBytes = 4;
// Gradient elements reduced at once with ZeRO 2/3: DeepSpeed's default reduce_bucket_size (5e8), the
// size of its contiguous "ipg" bucket that gradients are copied into before the reduce-scatter; a bucket
// never spans more than one layer in our plans. ZeRO 0/1 (Megatron-LM's DDP and distributed optimizer)
// reduce in place, in the contiguous gradient buffer the gradients are accumulated in: no copy.
constexpr double kBucketElements = 5e8;
// NCCL's buffers, allocated per communicator, per channel, per receiving connection, one per protocol:
// Simple NCCL_BUFFSIZE (default 4 MiB, NCCL docs, environment variables), LL128 DEFAULT_LL128_BUFFSIZE
// (NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x NCCL_STEPS 8 x 8 B, src/include/device.h)
// and LL DEFAULT_LL_BUFFSIZE (NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8 x 16 B).
constexpr double kNcclBytesPerConnection = 4194304.0 + 120.0 * 640 * 8 * 8 + 8.0 * 512 * 8 * 16;
// Channels a ring communicator opens at most: MAXCHANNELS (32, NCCL src/include/device.h, 2.12 to 2.18;
// fewer on slower links, so this bounds the buffers from above). A ring receives from one peer per channel.
constexpr double kNcclRingChannels = 32;
// Estimate, unconfirmed: the CUDA context with the kernels a training step loads (lazy module loading,
// CUDA_MODULE_LOADING=LAZY, PyTorch's default since 2.0), outside PyTorch's caching allocator. A round
// half gigabyte, not measured here and not fitted to any run.
constexpr double kCudaContextBytes = 0.5e9;
// training.dtype fp8: Transformer Engine keeps each linear layer's weight cast to fp8 twice, row- and
// column-major (the forward and the dgrad GEMM), cached across micro-batches (layer_kernels.hpp).
constexpr double kFp8WeightCopyBytes = 2;

/// Chunk-micro-batches a stage has run forward but not backward at its peak (internal/pipeline_schedule.hpp).
std::int64_t in_flight(const MegatronConfig& c, std::int64_t micro_batches, std::uint32_t stage) {
  const std::int64_t p = c.pp, s = stage, v = c.virtual_stages;
  if (v == 1) return std::min(micro_batches, p - s);
  const std::int64_t total = micro_batches * v;
  if (micro_batches == p) return total;
  return std::min(total, 2 * (p - s - 1) + (v - 1) * p + 1);
}

/// The MLP's tensors between its column- and row-parallel GEMMs, for `tokens` tokens of an MLP `width`
/// wide: GeLU's input, SwiGLU's gate and up outputs, and the activation's output, the down GEMM's input
/// (fp8 under training.dtype fp8: Transformer Engine saves the cast it multiplied).
double mlp_inner_bytes(const ModelSpec& m, const TrainingSpec& t, double tokens, double width) {
  const double e = t.element_bytes(), lin = t.fp8() ? gpu::bytes_of(gpu::DType::Fp8) : e;
  return ((m.activation == Activation::Swiglu ? 2 : 1) * e + lin) * tokens * width;
}

/// The attention's CP exchange buffers at their peak, once per GPU: the K/V of the whole sequence (p2p:
/// Transformer Engine keeps every block received in a layer's forward until that forward ends; all_gather:
/// the gathered K/V), and with all_gather also dK/dV of the whole sequence before the backward's
/// reduce-scatter.
double cp_exchange_bytes(const ModelSpec& m, const MegatronConfig& c, const TrainingSpec& t) {
  const double sequence_kv = c.cp * kv_block_bytes(m, c.tp, c.cp, c.micro_batch, t.element_bytes());
  return c.cp_comm == CpComm::AllGather ? 2 * sequence_kv : sequence_kv;
}

MemoryEstimate finish(MemoryEstimate e) {
  e.workspace = e.logits + e.buffers + e.runtime;
  return e;
}

}  // namespace

// Pipeline Send/Recv use NCCL's p2p buffers (NCCL_NCHANNELS_PER_NET_PEER channels per peer, tens of MiB):
// left out.
double runtime_bytes(int groups) { return kCudaContextBytes + groups * kNcclRingChannels * kNcclBytesPerConnection; }

double logit_bytes(const TrainingSpec& t) {
  return t.mixed_precision() ? kLossLogitBytes + t.element_bytes() : kLossLogitBytes;
}

ParamBytes param_bytes(const TrainingSpec& t) {
  if (!t.mixed_precision()) return {4, 4, 8};  // fp32: the weights are the master copy; Adam m + v
  // Math copy; the gradient buffer in the reduction dtype; fp32 master + m + v, and with a 16-bit gradient
  // buffer the fp32 copy of the gradient the optimizer steps on (Megatron-LM's distributed optimizer
  // guide: bf16 param + fp32 grads 6 + 12/d, 16-bit param + 16-bit grads 4 + 16/d bytes per parameter).
  return {t.element_bytes(), t.dp_grad_bytes, t.dp_grad_bytes < 4 ? 16.0 : 12.0};
}

double LayerActivations::kept(Recompute mode) const {
  switch (mode) {
    case Recompute::None: return all();
    case Recompute::Selective: return outside_core;
    case Recompute::Full: return input;
  }
  return all();
}

double LayerActivations::working_set(Recompute mode) const {
  switch (mode) {
    case Recompute::None: return 0;
    case Recompute::Selective: return core;
    case Recompute::Full: return all();
  }
  return 0;
}

LayerActivations layer_activations(const ModelSpec& m, const TrainingSpec& t, double sequences, ActivationSplit split) {
  const double e = t.element_bytes();
  const double sb = static_cast<double>(m.seq_len) * sequences;
  const double s = static_cast<double>(m.seq_len), a = static_cast<double>(m.heads);
  const double h = static_cast<double>(m.hidden), kvh = static_cast<double>(m.kv_hidden());
  const double ffn = static_cast<double>(m.ffn());
  const double masks = t.has_dropout() ? kDropoutMaskBytes : 0;
  // What a linear layer keeps of its input for the weight gradient: its fp8 copy under fp8 (TE's saved
  // cast), else the math-type tensor.
  const double lin = t.fp8() ? gpu::bytes_of(gpu::DType::Fp8) : e;

  // Outside the column/row-parallel pair: two norm inputs, QKV and MLP GEMM inputs, the dropout masks
  // after the attention projection and after the MLP (Korthikanti's 10sbh).
  const double outer = sb * h * (2 * e + lin + lin + 2 * masks);
  // Between them: Q, K, V (QK^T and scores x V inputs), the projection input, the MLP's inner tensors.
  const double mlp_inner = mlp_inner_bytes(m, t, sb, ffn);
  const double inner = sb * (e * h + 2 * e * kvh + lin * h) + mlp_inner;

  double core = 0;
  if (t.attention == AttentionImpl::Standard) {
    const double scores = a * s * sb;  // a s^2 b elements
    core = scores * (t.has_dropout() ? e + kDropoutMaskBytes + e : e) + 2 * e * sb * (h - kvh);
  } else {
    core = kSoftmaxStatBytes * a * sb;
  }

  LayerActivations l;
  l.input = e * sb * h / split.outer;
  l.outside_core = outer / split.outer + inner / split.inner;
  l.core = core / split.inner;
  return l;
}

LayerActivations moe_layer_activations(const ModelSpec& m, const TrainingSpec& t, double sequences,
                                       ActivationSplit split, double routed_tokens, double received_copies) {
  LayerActivations l = layer_activations(m, t, sequences, split);
  const double sb = static_cast<double>(m.seq_len) * sequences, e = t.element_bytes();
  const double shared = static_cast<double>(m.moe.shared_ffn());
  l.outside_core +=
      (mlp_inner_bytes(m, t, sb, shared) - mlp_inner_bytes(m, t, sb, static_cast<double>(m.ffn()))) / split.inner;
  const double h = static_cast<double>(m.hidden), k = static_cast<double>(m.moe.top_k);
  const double sent_copies = routed_tokens * k * route_experts(m.moe, 1).kept();
  l.outside_core += kRouterProbabilityBytes * routed_tokens * static_cast<double>(m.moe.experts) +
                    e * received_copies * h +
                    mlp_inner_bytes(m, t, received_copies, static_cast<double>(m.moe.expert_ffn)) + e * sent_copies * h;
  return l;
}

MemoryEstimate estimate_axonn4d_memory(const ModelSpec& m, const Axonn4DConfig& g, const TrainingSpec& t) {
  if (auto bad = axonn4d_infeasibility(m, g, t.global_batch); !bad.why.empty())
    throw std::invalid_argument("axonn4d memory: " + bad.why);
  const double H = static_cast<double>(m.hidden), L = static_cast<double>(m.layers), V = static_cast<double>(m.vocab);
  const double gx = g.gx, gy = g.gy, gz = g.gz;
  // Layer weights over x*y*z; the embedding (and an untied LM head) over x*y only.
  const double params = L * m.layer_params() / (gx * gy * gz) + m.embedding_params() / (gx * gy);
  const double batch = static_cast<double>(t.global_batch / (std::int64_t{g.gdata} * g.gz));
  const double tokens = batch * static_cast<double>(m.seq_len);

  const ParamBytes pb = param_bytes(t);
  MemoryEstimate e;
  e.weights = pb.weights * params;
  e.gradients = pb.gradients * params;
  e.optimizer = pb.optimizer * params;
  const LayerActivations layer = layer_activations(m, t, batch, {gx, gy});
  e.activations = L * layer.kept(t.recompute) + layer.working_set(t.recompute);

  // OAG: the current and the prefetched linear layer gathered over z; the largest is the MLP's up
  // projection (SwiGLU: gate and up fused) or the QKV one (never smaller than h x h).
  const double widest = H * static_cast<double>(std::max({m.qkv_out(), m.mlp_up_out(), m.ffn()}));
  e.logits = logit_bytes(t) * tokens * V / (gx * gy);
  e.buffers = 2 * pb.weights * widest / (gx * gy) +
              t.dp_grad_bytes * std::min(kBucketElements, m.layer_params() / (gx * gy * gz));
  const int groups = (g.gx > 1) + (g.gy > 1) + (g.gz > 1) + (g.gdata > 1);
  e.runtime = runtime_bytes(groups);
  return finish(e);
}

namespace {

/// A Megatron stage's mixture-of-experts terms: its layers' weights outside the routed experts (per GPU,
/// reduced over dp) and its routed experts (per GPU, reduced over edp), the activations its layers keep
/// per micro-batch (the mean over the stage's layers, dense and MoE alike) and the largest working set,
/// on the busiest expert-parallel rank; the communicating groups ep, edp and etp add.
struct MoeStage {
  double dense_params = 0, expert_params = 0;
  double edp = 1;
  double kept_per_layer = 0, working_set = 0;
  int groups = 0;
};

MoeStage moe_stage(const ModelSpec& m, const MegatronConfig& c, const TrainingSpec& t, std::uint32_t stage) {
  const double tp = c.tp, etp = c.expert_tp(), ep = c.ep;
  const bool sp = c.sequence_parallel && c.tp > 1;
  const ActivationSplit split{sp ? tp : 1, tp};
  const ExpertRouting routing = route_experts(m.moe, c.ep);
  const double hottest = *std::max_element(routing.rank_share.begin(), routing.rank_share.end());
  const double routed = static_cast<double>(c.micro_batch) * static_cast<double>(m.seq_len) / (sp ? tp : 1);
  const double received = ep * routed * static_cast<double>(m.moe.top_k) * hottest;
  const LayerActivations dense = layer_activations(m, t, c.micro_batch, split);
  const LayerActivations moe = moe_layer_activations(m, t, c.micro_batch, split, routed, received);
  const double router = static_cast<double>(m.hidden) * static_cast<double>(m.moe.experts);
  MoeStage out;
  out.edp = static_cast<double>(std::int64_t{c.tp} * c.dp_cp()) / (etp * ep);
  const std::int64_t per_chunk = m.layers / (std::int64_t{c.pp} * c.virtual_stages),
                     layers = per_chunk * c.virtual_stages;
  for (std::uint32_t chunk = 0; chunk < c.virtual_stages; ++chunk) {
    for (std::int64_t i = 0; i < per_chunk; ++i) {
      const std::int64_t layer = (std::int64_t{chunk} * c.pp + stage) * per_chunk + i;
      const bool routed_layer = m.moe.is_moe_layer(layer);
      out.dense_params += routed_layer ? (m.moe_dense_params() - router) / tp + router : m.layer_params() / tp;
      out.expert_params += m.layer_expert_params(layer) / (ep * etp);
      const LayerActivations& a = routed_layer ? moe : dense;
      out.kept_per_layer += a.kept(t.recompute) / static_cast<double>(layers);
      out.working_set = std::max(out.working_set, a.working_set(t.recompute));
    }
  }
  out.groups = (c.ep > 1) + (out.edp > 1) + (etp > 1 && etp < tp);
  return out;
}

}  // namespace

MemoryEstimate estimate_megatron_stage_memory(const ModelSpec& m, const MegatronConfig& c, const TrainingSpec& t,
                                              std::uint32_t stage) {
  if (auto bad = megatron_infeasibility(m, c, t, c.gpus()); !bad.why.empty())
    throw std::invalid_argument("megatron memory: " + bad.field + ": " + bad.why);
  if (stage >= c.pp) throw std::invalid_argument("megatron memory: stage out of range");
  const double H = static_cast<double>(m.hidden), tp = c.tp, dp = c.dp_cp();
  const bool sp = c.sequence_parallel && c.tp > 1;
  const bool first = stage == 0, last = stage + 1 == c.pp;
  const std::int64_t layers_per_chunk = m.layers / (std::int64_t{c.pp} * c.virtual_stages);
  const double stage_layers = static_cast<double>(layers_per_chunk) * c.virtual_stages;
  const double layer_params = m.layer_params() / tp;
  const double local_vocab = static_cast<double>((m.vocab + c.tp - 1) / c.tp);
  const double table = local_vocab * H;  // one vocabulary-parallel V x h matrix
  // The first stage holds the input embedding; the last the LM head: its own matrix when untied, a copy of
  // the embedding when tied and pp > 1, and nothing more when tied on a single stage (the same matrix).
  const bool head_matrix = last && (!m.tied_embeddings || c.pp > 1);
  // A CP rank holds seq/cp tokens of every sequence: activations, routed tokens and logits of that many.
  ModelSpec local = m;
  local.seq_len = m.seq_len / c.cp;
  const MoeStage moe = m.moe.enabled() ? moe_stage(local, c, t, stage) : MoeStage{};
  const double dense_layers = m.moe.enabled() ? moe.dense_params : stage_layers * layer_params;
  const double params = dense_layers + (first ? table : 0) + (head_matrix ? table : 0);
  const double tokens = static_cast<double>(c.micro_batch) * static_cast<double>(local.seq_len);

  const ParamBytes pb = param_bytes(t);
  MemoryEstimate e;
  const double fp8_copies = t.fp8() ? kFp8WeightCopyBytes * dense_layers : 0;
  const double expert_weights = (pb.weights + (t.fp8() ? kFp8WeightCopyBytes : 0)) * moe.expert_params;
  e.weights = (pb.weights * params + fp8_copies) / (c.zero >= 3 ? dp : 1) + expert_weights;
  e.gradients = pb.gradients * params / (c.zero >= 2 ? dp : 1) + pb.gradients * moe.expert_params;
  e.optimizer =
      pb.optimizer * params / (c.zero >= 1 ? dp : 1) + pb.optimizer * moe.expert_params / (c.zero >= 1 ? moe.edp : 1);
  const LayerActivations layer = layer_activations(local, t, c.micro_batch, {sp ? tp : 1, tp});
  const double kept_layers = static_cast<double>(in_flight(c, megatron_micro_batches(c, t), stage) * layers_per_chunk);
  if (m.moe.enabled())
    e.activations = kept_layers * moe.kept_per_layer + moe.working_set;
  else
    e.activations = kept_layers * layer.kept(t.recompute) + layer.working_set(t.recompute);

  // ZeRO 2/3: DeepSpeed's gradient bucket; ZeRO 3 also the gathered layer and the prefetched one.
  if (c.zero >= 2) e.buffers += t.dp_grad_bytes * std::min(kBucketElements, layer_params);
  if (c.zero >= 3) e.buffers += 2 * pb.weights * layer_params;
  if (c.cp > 1) e.buffers += cp_exchange_bytes(m, c, t);
  if (last) e.logits = logit_bytes(t) * tokens * local_vocab;
  // Process groups that communicate (torch creates a NCCL communicator at a group's first collective):
  // TP, DP (dp x cp ranks with CP), CP when it all-gathers (p2p rings use NCCL's p2p buffers, left out
  // as the pipeline's are), and the tied embedding's between the first and the last stage.
  const bool embedding_group = m.tied_embeddings && c.pp > 1 && (first || last);
  const bool cp_group = c.cp > 1 && c.cp_comm == CpComm::AllGather;
  e.runtime = runtime_bytes((c.tp > 1) + (c.dp_cp() > 1) + cp_group + embedding_group + moe.groups);
  return finish(e);
}

MemoryVerdict memory_verdict(const MemoryEstimate& e, double capacity_bytes) {
  const std::pair<const char*, double> parts[] = {{"weights", e.weights},
                                                  {"gradients", e.gradients},
                                                  {"optimizer", e.optimizer},
                                                  {"activations", e.activations},
                                                  {"workspace", e.workspace}};
  MemoryVerdict v;
  for (const auto& [name, bytes] : parts)
    if (v.largest.empty() || bytes > v.largest_bytes) v = {name, bytes, 0, {}};
  v.over_bytes = std::max(0.0, e.total() - capacity_bytes);
  if (v.over_bytes > 0)
    for (const auto& [name, bytes] : parts)
      if (bytes > v.over_bytes) v.over_terms.emplace_back(name);
  return v;
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
