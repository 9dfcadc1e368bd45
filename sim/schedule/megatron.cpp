#include "sim/schedule/megatron.hpp"

#include "sim/schedule/internal/context_parallel.hpp"
#include "sim/schedule/internal/layer_kernels.hpp"
#include "sim/schedule/internal/moe_block.hpp"
#include "sim/schedule/internal/pipeline_schedule.hpp"
#include "sim/schedule/stream_builder.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace exasim::schedule {

namespace {

constexpr std::int16_t kPrev = -1, kNext = +1;

/// Everything the stage builders need, derived once.
struct Shape {
  std::int64_t H, S, T;  ///< S = seq_len / cp tokens of a sequence on this rank; T = micro_batch * S
  std::int64_t micro_batch;
  std::int64_t local_vocab;  ///< vocabulary rows on one TP rank (rounded up)
  std::int64_t layers_per_chunk;
  LayerWidths w;                         ///< the layer's tensor widths before the TP split
  std::uint32_t tp, pp, dp, v, zero, m;  ///< dp: the gradient reduction's ranks, dp x cp
  bool sp;
  bool tp_overlap;          ///< tp_comm_overlap (with SP, tp > 1)
  bool scatter_gather;      ///< pipeline tensors split over TP on the wire (only without SP)
  bool tied;                ///< LM head shares the word embedding
  bool accumulation_fused;  ///< gradient accumulation inside the dW GEMM (no kernel of its own)
  double e;                 ///< bytes per activation / weight element (dtype)
  double model_layer_params;
  const ModelSpec* model = nullptr;
  std::optional<MoeLayout> moe;  ///< a mixture of experts' groups and routing; none for a dense model
  CpAttention cp;                ///< the attention's context parallelism (cp = 1: none)

  [[nodiscard]] double tokens() const { return static_cast<double>(T); }
  /// Elements of one [tokens x hidden] tensor on this GPU (sequence-sharded with SP).
  [[nodiscard]] double hidden_elements() const { return tokens() * static_cast<double>(H) / (sp ? tp : 1); }
  /// Bytes of that tensor.
  [[nodiscard]] double hidden_bytes() const { return e * hidden_elements(); }
  /// Full [tokens x hidden] buffer: the TP collectives' S.
  [[nodiscard]] double full_hidden_bytes() const { return e * tokens() * static_cast<double>(H); }
  /// Elements of the MLP's inner tensor on this GPU (ffn split over TP).
  [[nodiscard]] double ffn_elements() const { return tokens() * static_cast<double>(w.ffn / tp); }
  [[nodiscard]] double layer_params() const { return model_layer_params / tp; }
  [[nodiscard]] double embedding_params() const { return static_cast<double>(local_vocab) * static_cast<double>(H); }
  [[nodiscard]] AttentionSlice attention() const { return {micro_batch, S, w.heads / tp, w.kv_heads / tp, w.head_dim}; }

  // A mixture of experts (internal/moe_block.hpp); a dense model's layers all answer as layer_params().
  [[nodiscard]] bool moe_layer(std::int64_t layer) const { return moe && model->moe.is_moe_layer(layer); }
  /// Weights of `layer` on this GPU reduced over dp: a MoE layer's attention and shared experts split
  /// over TP, its router whole on every TP rank.
  [[nodiscard]] double dense_params(std::int64_t layer) const {
    if (!moe_layer(layer)) return layer_params();
    const double router = static_cast<double>(H) * static_cast<double>(model->moe.experts);
    return (model->moe_dense_params() - router) / tp + router;
  }
  /// Routed-expert weights of `layer` on this GPU, reduced over edp: experts / ep of them, split over etp.
  [[nodiscard]] double expert_params(std::int64_t layer) const {
    if (!moe_layer(layer)) return 0;
    return static_cast<double>(moe->local_experts) * model->expert_params() / moe->etp;
  }
  /// Tokens a rank routes per micro-batch: its sequence shard, after cp and (SP is required with tp > 1) tp.
  [[nodiscard]] std::int64_t routed_tokens() const { return sp ? T / tp : T; }
  [[nodiscard]] CpAttention cp_attention() const {
    CpAttention a = cp;
    a.local = attention();
    return a;
  }
};

/// One stage's op stream.
class StageBuilder {
 public:
  /// `role`: the stream (the stage, or stage x ep + ep_rank where expert loads differ).
  StageBuilder(Plan& plan, std::size_t role, std::uint32_t stage, std::uint32_t ep_rank, const Shape& s,
               const LayerKernels& kernels, const TrainingSpec& t, bool overlap_dp)
      : out_(plan, plan.streams[role]), s_(s), k_(kernels), training_(t), overlap_dp_(overlap_dp), stage_(stage) {
    if (s_.moe) experts_.emplace(out_, k_, moe_block_shape(*s_.model, *s_.moe, s_.routed_tokens(), ep_rank));
  }

  void build() {
    for (const auto& step : pipeline_schedule(s_.pp, s_.v, s_.m, stage_)) {
      switch (step.kind) {
        case PipelineStep::Kind::Forward: forward_chunk(step.chunk); break;
        case PipelineStep::Kind::Backward: backward_chunk(step.chunk, step.micro_batch); break;
        case PipelineStep::Kind::Comm: exchange(step); break;
      }
    }
    out_.set_phase(Phase::Backward);
    tied_embedding_exchange();
    reduce_gradients_after_flush();
    optimizer();
  }

 private:
  // --- model chunks ------------------------------------------------------------------------------
  [[nodiscard]] std::int64_t model_chunk(std::uint32_t chunk) const { return std::int64_t{chunk} * s_.pp + stage_; }
  [[nodiscard]] bool first_model_chunk(std::uint32_t chunk) const { return model_chunk(chunk) == 0; }
  [[nodiscard]] bool last_model_chunk(std::uint32_t chunk) const {
    return model_chunk(chunk) == std::int64_t{s_.pp} * s_.v - 1;
  }
  /// A tied word embedding is stored on the first stage, and again on the last when pp > 1; an untied
  /// model keeps its embedding on the first stage and its LM head on the last.
  [[nodiscard]] int vocab_matrices(std::uint32_t chunk) const {
    if (!s_.tied) return int{first_model_chunk(chunk)} + int{last_model_chunk(chunk)};
    return first_model_chunk(chunk) || (last_model_chunk(chunk) && s_.pp > 1) ? 1 : 0;
  }
  /// Weights of the stage reduced over dp (all of a dense model's).
  [[nodiscard]] double stage_params() const {
    double p = 0;
    if (s_.moe)
      for_stage_layers([&](std::int64_t layer) { p += s_.dense_params(layer); });
    else
      p = static_cast<double>(s_.v * s_.layers_per_chunk) * s_.layer_params();
    for (std::uint32_t c = 0; c < s_.v; ++c) p += vocab_matrices(c) * s_.embedding_params();
    return p;
  }
  /// Routed-expert weights of the stage, reduced over edp.
  [[nodiscard]] double stage_expert_params() const {
    double p = 0;
    for_stage_layers([&](std::int64_t layer) { p += s_.expert_params(layer); });
    return p;
  }
  template <class F>
  void for_stage_layers(F f) const {
    for (std::uint32_t c = 0; c < s_.v; ++c)
      for (std::int64_t i = 0; i < s_.layers_per_chunk; ++i) f(model_chunk(c) * s_.layers_per_chunk + i);
  }
  static std::string layer_name(std::int64_t layer) {
    std::string name = "L";  // appended piecewise: "L" + std::string&& trips GCC 12's -Wrestrict (bug 105329)
    name += std::to_string(layer);
    return name;
  }
  static std::string tag(std::int64_t layer, const char* what) {
    std::string name = layer_name(layer);
    name += '.';
    name += what;
    return name;
  }

  // --- ZeRO-3 parameter gathers, one group ahead --------------------------------------------------
  struct ParamGroup {
    std::string name;
    double params;
  };
  [[nodiscard]] std::vector<ParamGroup> param_groups(std::uint32_t chunk, bool backward) const {
    std::vector<ParamGroup> groups;
    if (first_model_chunk(chunk)) groups.push_back({"embedding", s_.embedding_params()});
    const std::int64_t first_layer = model_chunk(chunk) * s_.layers_per_chunk;
    for (std::int64_t i = 0; i < s_.layers_per_chunk; ++i)
      groups.push_back({tag(first_layer + i, "params"), s_.layer_params()});
    if (last_model_chunk(chunk)) groups.push_back({"lm_head", s_.embedding_params()});
    if (backward) std::reverse(groups.begin(), groups.end());
    return groups;
  }
  void gather_begin(std::vector<ParamGroup> groups, const char* pass) {
    if (s_.zero < 3) return;
    gather_groups_ = std::move(groups);
    gather_pass_ = pass;
    gather_next_ = 0;
    gathered_ = gather_start(0);
  }
  Handle gather_start(std::size_t i) {
    if (i >= gather_groups_.size()) return StreamBuilder::kNoHandle;
    const auto& g = gather_groups_[i];
    return out_.start(g.name + "." + gather_pass_ + ".zero3_all_gather", CollKind::AllGather, kMegDimDp,
                      s_.e * g.params);
  }
  /// Before using the next parameter group: wait for its gather, start the following one.
  void gather_use() {
    if (s_.zero < 3) return;
    out_.wait(gathered_);
    gathered_ = gather_start(++gather_next_);
  }

  // --- forward -----------------------------------------------------------------------------------
  [[nodiscard]] const char* activation_name() const { return s_.w.activation_name(); }
  void tp_collective(const std::string& name, CollKind kind) {
    out_.collective(name, kind, kMegDimTp, s_.full_hidden_bytes());
  }
  /// The "g" of Megatron after a row-parallel layer: all-reduce, or reduce-scatter with SP.
  void tp_reduce(const std::string& name) {
    if (s_.sp)
      tp_collective(name + ".sp_reduce_scatter", CollKind::ReduceScatter);
    else
      tp_collective(name + ".all_reduce", CollKind::AllReduce);
  }
  /// The "f" before a column-parallel layer: nothing in forward, an all-gather with SP.
  void tp_gather(const std::string& name) {
    if (s_.sp) tp_collective(name + ".sp_all_gather", CollKind::AllGather);
  }

  /// A transformer layer's linear GEMM: fp8 under training.dtype fp8, its casts apart (layer_kernels.hpp).
  [[nodiscard]] gpu::Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) const {
    return k_.linear_gemm(m, n, k, layout);
  }
  /// The LM head's GEMMs: Megatron's output layer is not a Transformer Engine module, never fp8.
  [[nodiscard]] gpu::Kernel head_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) const {
    return gpu::gemm(m, n, k, layout, k_.dtype());
  }

  /// "f" then a GEMM of the gathered tokens (T x n x k). With tp_comm_overlap, TE's ring-exchange
  /// all-gather: the GEMM runs in tp chunks of T/tp rows, the first on the local shard, each next one
  /// once its shard has arrived, the exchange of the shard after it running beside: tp - 1 pieces of
  /// the gather (each an all-gather carrying 1/tp of the buffer per member).
  void gathered_gemm(const std::string& name, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) {
    out_.compute(name, k_.fp8_cast(s_.hidden_elements()));  // TE casts the local shard, then gathers
    if (!s_.tp_overlap) {
      tp_gather(name);
      out_.compute(name + ".gemm", gemm(s_.T, n, k, layout));
      return;
    }
    const std::int64_t tp = s_.tp, rows = s_.T / tp;
    const double piece = s_.full_hidden_bytes() / static_cast<double>(tp - 1);
    Handle next = out_.start(name + ".sp_all_gather.overlapped", CollKind::AllGather, kMegDimTp, piece);
    for (std::int64_t c = 0; c < tp; ++c) {
      out_.compute(name + ".gemm", gemm(c + 1 == tp ? s_.T - rows * (tp - 1) : rows, n, k, layout));
      if (c + 1 == tp) break;
      out_.wait(next);
      if (c + 2 < tp) next = out_.start(name + ".sp_all_gather.overlapped", CollKind::AllGather, kMegDimTp, piece);
    }
  }

  /// A GEMM (T x n x k) then "g". With tp_comm_overlap, TE's pipelined reduce-scatter: the GEMM runs in
  /// tp chunks of T/tp rows, each chunk's reduce-scatter piece (1/tp of the buffer) sent while the next
  /// chunk computes; the last piece is waited for after the last chunk.
  void reduced_gemm(const std::string& name, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) {
    out_.compute(name, k_.fp8_cast(s_.tokens() * static_cast<double>(k)));
    if (!s_.tp_overlap) {
      out_.compute(name + ".gemm", gemm(s_.T, n, k, layout));
      tp_reduce(name);
      return;
    }
    const std::int64_t tp = s_.tp, rows = s_.T / tp;
    const double piece = s_.full_hidden_bytes() / static_cast<double>(tp);
    Handle previous = StreamBuilder::kNoHandle;
    for (std::int64_t c = 0; c < tp; ++c) {
      out_.compute(name + ".gemm", gemm(c + 1 == tp ? s_.T - rows * (tp - 1) : rows, n, k, layout));
      out_.wait(previous);
      previous = out_.start(name + ".sp_reduce_scatter.overlapped", CollKind::ReduceScatter, kMegDimTp, piece);
    }
    out_.wait(previous);
  }

  void layer_forward(std::int64_t layer, const char* pass) {
    const std::string p = std::string(".") + pass;
    const std::int64_t H = s_.H, tp = s_.tp;
    gather_use();
    out_.compute(tag(layer, "ln1") + p, k_.norm_forward(s_.hidden_elements()));
    gathered_gemm(tag(layer, "qkv") + p, s_.w.qkv_out / tp, H, kForwardLayout);
    cp_attention_forward(out_, k_, s_.cp_attention(), tag(layer, "attention") + p);
    reduced_gemm(tag(layer, "attn_out") + p, H, H / tp, kForwardLayout);
    out_.compute(tag(layer, "residual1") + p, k_.residual_forward(s_.hidden_elements()));
    out_.compute(tag(layer, "ln2") + p, k_.norm_forward(s_.hidden_elements()));
    if (s_.moe_layer(layer))
      moe_forward(layer, p);
    else
      mlp_forward(layer, p, kDenseMlp, s_.w.mlp_up_out, s_.w.ffn);
    out_.compute(tag(layer, "residual2") + p, k_.residual_forward(s_.hidden_elements()));
  }

  /// Op names of a tensor-parallel MLP: the dense one, or a MoE layer's shared experts.
  struct MlpNames {
    const char *up, *down, *activation_prefix;
  };
  static constexpr MlpNames kDenseMlp{"mlp_up", "mlp_down", ""};
  static constexpr MlpNames kSharedMlp{"shared_up", "shared_down", "shared_"};
  [[nodiscard]] std::string activation_tag(std::int64_t layer, const MlpNames& names) const {
    return tag(layer, (std::string(names.activation_prefix) + activation_name()).c_str());
  }
  /// Column-parallel up (up_out wide), the activation, row-parallel down (ffn wide), TP-split.
  void mlp_forward(std::int64_t layer, const std::string& p, const MlpNames& names, std::int64_t up_out,
                   std::int64_t ffn) {
    const std::int64_t H = s_.H, tp = s_.tp;
    gathered_gemm(tag(layer, names.up) + p, up_out / tp, H, kForwardLayout);
    out_.compute(activation_tag(layer, names) + p, k_.activation_forward(s_.tokens() * static_cast<double>(ffn / tp)));
    reduced_gemm(tag(layer, names.down) + p, H, ffn / tp, kForwardLayout);
  }
  /// A MoE layer's MLP: its shared experts, then its routed experts, their outputs summed.
  void moe_forward(std::int64_t layer, const std::string& p) {
    const auto& moe = s_.model->moe;
    if (moe.shared_experts > 0) mlp_forward(layer, p, kSharedMlp, up_width(moe.shared_ffn()), moe.shared_ffn());
    experts_->forward(layer_name(layer), p);
    if (moe.shared_experts > 0)
      out_.compute(tag(layer, "shared_add") + p, LayerKernels::elementwise(3 * s_.hidden_bytes()));
  }
  [[nodiscard]] std::int64_t up_width(std::int64_t ffn) const { return s_.w.mlp_up_out == s_.w.ffn ? ffn : 2 * ffn; }

  void embedding_forward() {
    gather_use();
    out_.compute("embedding.fwd", LayerKernels::elementwise(s_.hidden_bytes()));
    tp_reduce("embedding.fwd");  // vocab-parallel lookup: partial rows summed over TP
    if (k_.dropout()) out_.compute("embedding.dropout.fwd", k_.dropout_forward(s_.hidden_elements()));
  }

  void head_forward() {
    gather_use();
    out_.compute("final_ln.fwd", k_.norm_forward(s_.hidden_elements()));
    tp_gather("lm_head.fwd");
    out_.compute("lm_head.fwd.gemm", head_gemm(s_.T, s_.local_vocab, s_.H, kForwardLayout));
    // Vocab-parallel cross-entropy: max, predicted logit and sum of exponentials, fp32 per token.
    for (const char* what : {"max", "target", "sum"})
      out_.collective(std::string("cross_entropy.") + what + ".all_reduce", CollKind::AllReduce, kMegDimTp,
                      4 * s_.tokens());
    out_.compute("cross_entropy.fwd",
                 LayerKernels::elementwise(3 * s_.e * s_.tokens() * static_cast<double>(s_.local_vocab)));
  }

  void forward_chunk(std::uint32_t chunk) {
    out_.set_phase(Phase::Forward);
    gather_begin(param_groups(chunk, false), "fwd");
    if (first_model_chunk(chunk)) embedding_forward();
    const std::int64_t first_layer = model_chunk(chunk) * s_.layers_per_chunk;
    for (std::int64_t i = 0; i < s_.layers_per_chunk; ++i) layer_forward(first_layer + i, "fwd");
    if (last_model_chunk(chunk)) head_forward();
  }

  // --- backward ----------------------------------------------------------------------------------
  /// Row-parallel layer (input features split over TP): the output gradient is replicated (gathered
  /// with SP), no reduction of dX.
  void row_backward(const std::string& name, std::int64_t n_out, std::int64_t k_in) {
    if (s_.tp_overlap) {
      gathered_gemm(name + ".dx", k_in / s_.tp, n_out, kDgradLayout);
    } else {
      out_.compute(name, k_.fp8_cast(s_.hidden_elements()));
      if (s_.sp) tp_collective(name + ".sp_all_gather", CollKind::AllGather);
      out_.compute(name + ".dx_gemm", gemm(s_.T, k_in / s_.tp, n_out, kDgradLayout));
    }
    out_.compute(name + ".dw_gemm", gemm(n_out, k_in / s_.tp, s_.T, kWgradLayout));
  }

  /// Column-parallel layer (output features split over TP): dX is partial and reduced over TP while the
  /// dW GEMM runs; with SP the input is first re-gathered under the dX GEMM. `head`: the LM head, whose
  /// GEMMs are never fp8.
  void column_backward(const std::string& name, std::int64_t n_out, std::int64_t k_in, bool head = false) {
    const std::int64_t out_local = n_out / s_.tp;
    const auto gemm_of = [&](std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) {
      return head ? head_gemm(m, n, k, layout) : gemm(m, n, k, layout);
    };
    Handle input = StreamBuilder::kNoHandle;
    if (s_.sp)
      input = out_.start(name + ".sp_input_all_gather", CollKind::AllGather, kMegDimTp, s_.full_hidden_bytes());
    if (!head) out_.compute(name, k_.fp8_cast(s_.tokens() * static_cast<double>(out_local)));
    out_.compute(name + ".dx_gemm", gemm_of(s_.T, k_in, out_local, kDgradLayout));
    out_.wait(input);
    const double bytes = s_.full_hidden_bytes();
    Handle reduce = s_.sp ? out_.start(name + ".sp_reduce_scatter", CollKind::ReduceScatter, kMegDimTp, bytes)
                          : out_.start(name + ".all_reduce", CollKind::AllReduce, kMegDimTp, bytes);
    out_.compute(name + ".dw_gemm", gemm_of(out_local, k_in, s_.T, kWgradLayout));
    out_.wait(reduce);
  }

  void mlp_backward(std::int64_t layer, const std::string& p, const MlpNames& names, std::int64_t up_out,
                    std::int64_t ffn) {
    row_backward(tag(layer, names.down) + p, s_.H, ffn);
    out_.compute(activation_tag(layer, names) + p,
                 k_.activation_backward(s_.tokens() * static_cast<double>(ffn / s_.tp)));
    column_backward(tag(layer, names.up) + p, up_out, s_.H);
  }

  void layer_backward(std::int64_t layer) {
    const std::string p = ".bwd";
    const std::int64_t H = s_.H;
    out_.compute(tag(layer, "residual2") + p, k_.residual_backward(s_.hidden_elements()));
    if (s_.moe_layer(layer)) {
      const auto& moe = s_.model->moe;
      experts_->backward(layer_name(layer));
      if (moe.shared_experts > 0) mlp_backward(layer, p, kSharedMlp, up_width(moe.shared_ffn()), moe.shared_ffn());
    } else {
      mlp_backward(layer, p, kDenseMlp, s_.w.mlp_up_out, s_.w.ffn);
    }
    out_.compute(tag(layer, "ln2") + p, k_.norm_backward(s_.hidden_elements()));
    out_.compute(tag(layer, "residual1") + p, k_.residual_backward(s_.hidden_elements()));
    row_backward(tag(layer, "attn_out") + p, H, H);
    if (training_.selective_recompute()) {
      // Selective recomputation: the attention core's activations were dropped after forward.
      out_.set_phase(Phase::Recompute);
      cp_attention_forward(out_, k_, s_.cp_attention(), tag(layer, "attention.recompute"));
      out_.set_phase(Phase::Backward);
    }
    cp_attention_backward(out_, k_, s_.cp_attention(), tag(layer, "attention") + p);
    column_backward(tag(layer, "qkv") + p, s_.w.qkv_out, H);
    out_.compute(tag(layer, "ln1") + p, k_.norm_backward(s_.hidden_elements()));
  }

  void head_backward() {
    gather_use();
    out_.compute("cross_entropy.bwd",
                 LayerKernels::elementwise(2 * s_.e * s_.tokens() * static_cast<double>(s_.local_vocab)));
    column_backward("lm_head.bwd", s_.local_vocab * s_.tp, s_.H, /*head=*/true);
    out_.compute("final_ln.bwd", k_.norm_backward(s_.hidden_elements()));
  }

  void backward_chunk(std::uint32_t chunk, std::uint32_t micro_batch) {
    out_.set_phase(Phase::Backward);
    const bool last_micro_batch = micro_batch + 1 == s_.m;
    gather_begin(param_groups(chunk, true), "bwd");
    if (last_model_chunk(chunk)) head_backward();
    const std::int64_t first_layer = model_chunk(chunk) * s_.layers_per_chunk;
    for (std::int64_t i = s_.layers_per_chunk - 1; i >= 0; --i) {
      const std::int64_t layer = first_layer + i;
      if (training_.full_recompute()) {
        out_.set_phase(Phase::Recompute);
        layer_forward(layer, "recompute");  // its gather serves the backward too
        out_.set_phase(Phase::Backward);
      } else {
        gather_use();
      }
      layer_backward(layer);
      if (!s_.accumulation_fused)
        out_.compute(
            tag(layer, "grads.accumulate"),
            k_.grad_accumulation_add(s_.dense_params(layer) + s_.expert_params(layer), training_.dp_grad_bytes));
      reduce_bucket(tag(layer, "grads"), s_.dense_params(layer), last_micro_batch);
      if (s_.moe_layer(layer))
        reduce_bucket(tag(layer, "expert_grads"), s_.expert_params(layer), last_micro_batch, s_.moe->edp_dim, "edp");
    }
    if (first_model_chunk(chunk)) {
      gather_use();
      if (k_.dropout()) out_.compute("embedding.dropout.bwd", k_.dropout_backward(s_.hidden_elements()));
      out_.compute("embedding.bwd", LayerKernels::elementwise(s_.hidden_bytes()));
    }
    if (const int matrices = vocab_matrices(chunk); matrices > 0)
      reduce_bucket("embedding.grads", matrices * s_.embedding_params(), last_micro_batch);
    for (Handle h : chunk_reductions_) out_.wait(h);  // ZeRO 2/3 overlapped: drained with the chunk
    chunk_reductions_.clear();
  }

  /// A layer's (or the embedding's) gradients are final for this micro-batch.
  /// Over dp, or a MoE layer's experts over edp (`dim`, named `group` in the op names).
  void reduce_bucket(const std::string& name, double params, bool last_micro_batch, std::uint8_t dim = kMegDimDp,
                     const std::string& group = "dp") {
    const double bytes = training_.dp_grad_bytes * params;
    if (s_.zero >= 2) {
      Handle h = out_.start(name + "." + group + "_reduce_scatter", CollKind::ReduceScatter, dim, bytes);
      if (overlap_dp_)
        chunk_reductions_.push_back(h);
      else
        out_.wait(h);
    } else if (overlap_dp_ && last_micro_batch) {
      CollKind kind = s_.zero == 1 ? CollKind::ReduceScatter : CollKind::AllReduce;
      flush_reductions_.push_back(
          out_.start(name + "." + group + (s_.zero == 1 ? "_reduce_scatter" : "_all_reduce"), kind, dim, bytes));
    }
  }

  // --- pipeline transfers ------------------------------------------------------------------------
  void exchange(const PipelineStep& step) {
    struct Posted {
      Handle handle;
      Phase phase;
    };
    std::vector<Posted> posted;
    // [micro_batch, seq, hidden] in the math type: sequence-sharded with SP; with scatter-gather each TP
    // rank sends its 1/tp slice and the receiver all-gathers the whole tensor over TP.
    const bool split = scatter_gather();
    const double bytes = s_.hidden_bytes() / (split ? s_.tp : 1);
    auto post = [&](bool wanted, const char* name, CollKind kind, std::int16_t peer, Phase phase) {
      if (!wanted) return;
      out_.set_phase(phase);
      posted.push_back({p2p(name, kind, peer, bytes), phase});
    };
    post(step.send_prev, "pp.send_grad", CollKind::Send, kPrev, Phase::Backward);
    post(step.recv_prev, "pp.recv_activation", CollKind::Recv, kPrev, Phase::Forward);
    post(step.send_next, "pp.send_activation", CollKind::Send, kNext, Phase::Forward);
    post(step.recv_next, "pp.recv_grad", CollKind::Recv, kNext, Phase::Backward);
    for (const auto& p : posted) {
      out_.set_phase(p.phase);
      out_.wait(p.handle);
    }
    if (!split) return;
    if (step.recv_prev) gather_received("pp.recv_activation", Phase::Forward);
    if (step.recv_next) gather_received("pp.recv_grad", Phase::Backward);
  }

  [[nodiscard]] bool scatter_gather() const { return s_.scatter_gather && !s_.sp && s_.tp > 1; }
  void gather_received(const std::string& name, Phase phase) {
    out_.set_phase(phase);
    tp_collective(name + ".tp_all_gather", CollKind::AllGather);
  }

  Handle p2p(const std::string& name, CollKind kind, std::int16_t peer, double bytes) {
    return out_.start(name, kind, kMegDimPp, bytes, peer);
  }

  // --- after the flush ---------------------------------------------------------------------------
  /// First and last stage hold the same word embedding: sum their gradients (a 2-member all-reduce,
  /// written as a Send and a Recv each way).
  void tied_embedding_exchange() {
    if (!s_.tied || s_.pp < 2 || (stage_ != 0 && stage_ + 1 != s_.pp)) return;
    const std::int16_t peer = stage_ == 0 ? kPrev : kNext;  // stage 0 <-> stage pp-1, both ways
    const double bytes = training_.dp_grad_bytes * s_.embedding_params();
    Handle send = p2p("embedding.tied_grad_send", CollKind::Send, peer, bytes);
    Handle recv = p2p("embedding.tied_grad_recv", CollKind::Recv, peer, bytes);
    out_.wait(send);
    out_.wait(recv);
    out_.compute("embedding.tied_grad_add",
                 LayerKernels::elementwise(3 * training_.dp_grad_bytes * s_.embedding_params()));
  }

  void reduce_gradients_after_flush() {
    if (s_.zero <= 1 && !overlap_dp_) {
      const double bytes = training_.dp_grad_bytes * stage_params();
      if (s_.zero == 1)
        out_.collective("grads.dp_reduce_scatter", CollKind::ReduceScatter, kMegDimDp, bytes);
      else
        out_.collective("grads.dp_all_reduce", CollKind::AllReduce, kMegDimDp, bytes);
      if (s_.moe) {
        const double expert_bytes = training_.dp_grad_bytes * stage_expert_params();
        if (s_.zero == 1)
          out_.collective("expert_grads.edp_reduce_scatter", CollKind::ReduceScatter, s_.moe->edp_dim, expert_bytes);
        else
          out_.collective("expert_grads.edp_all_reduce", CollKind::AllReduce, s_.moe->edp_dim, expert_bytes);
      }
    }
    for (Handle h : flush_reductions_) out_.wait(h);
    flush_reductions_.clear();
  }

  void optimizer() {
    out_.set_phase(Phase::Optimizer);
    double local = stage_params() / (s_.zero >= 1 ? s_.dp : 1);
    if (s_.moe) local += stage_expert_params() / (s_.zero >= 1 ? s_.moe->edp : 1);
    out_.compute("optimizer.adam", k_.optimizer_step(local, training_.dp_grad_bytes));
    if (s_.zero == 1 || s_.zero == 2)
      out_.collective("params.dp_all_gather", CollKind::AllGather, kMegDimDp, s_.e * stage_params());
    if (s_.moe && s_.zero == 1)
      out_.collective("expert_params.edp_all_gather", CollKind::AllGather, s_.moe->edp_dim,
                      s_.e * stage_expert_params());
    // Transformer Engine's fp8 weight copies, cast once per iteration after the step (the router's few
    // weights, not a TE module, included: H x experts beside millions).
    double layer_weights = 0;
    if (s_.moe)
      for_stage_layers([&](std::int64_t layer) { layer_weights += s_.dense_params(layer) + s_.expert_params(layer); });
    else
      layer_weights = static_cast<double>(s_.v * s_.layers_per_chunk) * s_.layer_params();
    out_.compute("params", k_.fp8_weight_cast(layer_weights));
  }

  StreamBuilder out_;
  const Shape& s_;
  const LayerKernels& k_;
  TrainingSpec training_;
  bool overlap_dp_;
  std::uint32_t stage_;
  std::vector<Handle> chunk_reductions_;  ///< ZeRO 2/3 reduce-scatters of the current chunk's backward
  std::vector<Handle> flush_reductions_;  ///< ZeRO 0/1 bucket reductions, drained after the flush
  std::optional<MoeBlock> experts_;       ///< a mixture of experts' routed part of this role
  std::vector<ParamGroup> gather_groups_;
  const char* gather_pass_ = "";
  std::size_t gather_next_ = 0;
  Handle gathered_ = StreamBuilder::kNoHandle;
};

}  // namespace

std::int64_t megatron_micro_batches(const MegatronConfig& cfg, const TrainingSpec& training) {
  const std::int64_t per_step = std::int64_t{cfg.dp} * cfg.micro_batch;
  return per_step > 0 ? training.global_batch / per_step : 0;
}

Infeasibility megatron_infeasibility(const ModelSpec& m, const MegatronConfig& c, const TrainingSpec& t,
                                     std::uint32_t gpus) {
  auto str = [](auto v) { return std::to_string(v); };
  for (auto [field, value] : {std::pair{"parallel.tp", c.tp}, std::pair{"parallel.pp", c.pp},
                              std::pair{"parallel.dp", c.dp}, std::pair{"parallel.micro_batch", c.micro_batch},
                              std::pair{"parallel.virtual_stages", c.virtual_stages}, std::pair{"parallel.cp", c.cp}})
    if (value < 1) return {field, "must be at least 1, got " + str(value)};
  if (c.zero > 3) return {"parallel.zero", "ZeRO stage must be 0, 1, 2 or 3, got " + str(c.zero)};
  if (const std::int64_t product = std::int64_t{c.tp} * c.cp * c.pp * c.dp; product != gpus)
    return {"gpus", std::string(c.cp > 1 ? "tp*cp*pp*dp = " : "tp*pp*dp = ") + str(product) +
                        " must equal the number of GPUs, " + str(gpus)};
  if (m.heads % c.tp != 0)
    return {"parallel.tp", "model heads " + str(m.heads) + " are not divisible by tp = " + str(c.tp) +
                               " (attention heads are split over tensor parallel ranks)"};
  if (m.kv() % c.tp != 0)
    return {"parallel.tp", "model kv_heads " + str(m.kv()) + " are not divisible by tp = " + str(c.tp) +
                               " (key/value head groups are split over tensor parallel ranks)"};
  if (m.ffn() % c.tp != 0)
    return {"parallel.tp", "model ffn_hidden " + str(m.ffn()) + " is not divisible by tp = " + str(c.tp) +
                               " (the MLP's inner width is split over tensor parallel ranks)"};
  if (c.tp_comm_overlap && (!c.sequence_parallel || c.tp < 2))
    return {"parallel.tp_comm_overlap",
            "the tensor-parallel communication overlap (Transformer Engine's userbuffers) pipelines sequence "
            "parallelism's all-gathers and reduce-scatters: it needs sequence_parallel true and tp >= 2 (got "
            "sequence_parallel " +
                std::string(c.sequence_parallel ? "true" : "false") + ", tp " + str(c.tp) + ")"};
  if (auto bad = context_parallel_infeasibility(m, c.cp, t); !bad.why.empty()) return bad;
  if (c.sequence_parallel && (m.seq_len / c.cp) % c.tp != 0)
    return {"parallel.tp", "sequence parallelism splits seq_len " + str(m.seq_len) +
                               (c.cp > 1 ? " / cp = " + str(m.seq_len / c.cp) : std::string()) +
                               " over tp = " + str(c.tp) + ", which does not divide it"};
  if (m.layers % c.pp != 0)
    return {"parallel.pp", "model layers " + str(m.layers) + " are not divisible by pp = " + str(c.pp)};
  if (m.layers % (std::int64_t{c.pp} * c.virtual_stages) != 0)
    return {"parallel.virtual_stages", "model layers " + str(m.layers) +
                                           " are not divisible by pp*virtual_stages = " + str(c.pp * c.virtual_stages)};
  if (t.global_batch % (std::int64_t{c.dp} * c.micro_batch) != 0)
    return {"training.global_batch", "global_batch " + str(t.global_batch) +
                                         " is not divisible by dp*micro_batch = " + str(c.dp * c.micro_batch)};
  const std::int64_t micro_batches = megatron_micro_batches(c, t);
  if (micro_batches < 1)
    return {"training.global_batch", "global_batch " + str(t.global_batch) + " gives no micro-batch"};
  if (auto bad = megatron_moe_infeasibility(m, c); !bad.why.empty()) return bad;
  if (c.virtual_stages > 1) {
    if (c.pp < 2)
      return {"parallel.virtual_stages", "interleaving (virtual_stages " + str(c.virtual_stages) + ") needs pp >= 2"};
    if (micro_batches < c.pp || micro_batches % c.pp != 0)
      return {"parallel.virtual_stages", "the interleaved schedule needs the micro-batches per pipeline (" +
                                             str(micro_batches) + " = global_batch/(dp*micro_batch)) to be " +
                                             "a positive multiple of pp = " + str(c.pp)};
  }
  return {};
}

Plan build_megatron_plan(const ModelSpec& model, const MegatronConfig& cfg, const TrainingSpec& training,
                         const OverlapSpec& overlap) {
  if (auto bad = megatron_infeasibility(model, cfg, training, cfg.gpus()); !bad.why.empty())
    throw std::invalid_argument("megatron: " + bad.field + ": " + bad.why);
  Shape s{};
  s.H = model.hidden;
  s.S = model.seq_len / cfg.cp;
  s.micro_batch = cfg.micro_batch;
  s.T = s.micro_batch * s.S;
  s.local_vocab = (model.vocab + cfg.tp - 1) / cfg.tp;
  s.layers_per_chunk = model.layers / (std::int64_t{cfg.pp} * cfg.virtual_stages);
  s.tp = cfg.tp;
  s.pp = cfg.pp;
  s.dp = cfg.dp_cp();
  s.v = cfg.virtual_stages;
  s.zero = cfg.zero;
  s.m = static_cast<std::uint32_t>(megatron_micro_batches(cfg, training));
  s.sp = cfg.sequence_parallel && cfg.tp > 1;
  s.tp_overlap = cfg.tp_comm_overlap && s.sp;
  s.scatter_gather = cfg.scatter_gather;
  s.tied = model.tied_embeddings;
  s.accumulation_fused = cfg.grad_accumulation_fusion;
  s.e = training.element_bytes();
  s.w = LayerWidths::of(model);
  s.model_layer_params = model.layer_params();
  s.model = &model;
  s.cp = {cfg.cp, cfg.cp_comm, kMegDimCp, {}, kv_block_bytes(model, cfg.tp, cfg.cp, cfg.micro_batch, s.e)};
  const LayerKernels kernels(model, training);

  Plan plan;
  plan.grid = ProcessGrid({{"tp", cfg.tp}, {cfg.cp > 1 ? "dp_cp" : "dp", cfg.dp_cp()}, {"pp", cfg.pp}});
  if (cfg.cp > 1) (void)plan.grid.add_nested("cp", kMegDimDp, cfg.cp);
  plan.role_dim = kMegDimPp;
  // A mixture of experts: its groups, and one stream per expert-parallel coordinate where their loads differ.
  std::uint32_t ep_roles = 1;
  if (model.moe.enabled()) {
    s.moe = add_expert_views(plan.grid, kMegDimPp, model, cfg);
    plan.all_to_all_shares.resize(plan.grid.dims().size());
    if (model.moe.capacity_factor || !s.moe->routing.balanced())  // else uniform: S/ep a pair
      plan.all_to_all_shares[s.moe->ep_dim] = s.moe->routing.rank_share;
    if (!s.moe->routing.balanced()) {
      plan.role_subdim = s.moe->ep_dim;
      ep_roles = s.moe->ep;
    }
  }
  plan.streams.resize(std::size_t{cfg.pp} * ep_roles);  // never resized again: builders hold references into it
  for (std::uint32_t stage = 0; stage < cfg.pp; ++stage)
    for (std::uint32_t ep_rank = 0; ep_rank < ep_roles; ++ep_rank)
      StageBuilder(plan, std::size_t{stage} * ep_roles + ep_rank, stage, ep_rank, s, kernels, training, overlap.dp)
          .build();
  return plan;
}

}  // namespace exasim::schedule
