#include "sim/schedule/megatron.hpp"

#include "sim/schedule/internal/context_parallel.hpp"
#include "sim/schedule/internal/layer_kernels.hpp"
#include "sim/schedule/internal/pipeline_schedule.hpp"
#include "sim/schedule/stream_builder.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::schedule {

namespace {

constexpr std::int16_t kPrev = -1, kNext = +1;

// Operand layouts of a linear layer whose weight W is stored [out x in], in GemmLayout's naming
// (kernel.hpp: the BLAS letters of torch's call, as AxoNN's tuned_matmul and rocblas-bench name them).
// Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication computes forward
// `input.matmul(weight.t())`, and in backward `grad_output.matmul(weight)` and
// `grad_output.t().matmul(input)`; Megatron-DeepSpeed's older layers call F.linear, whose autograd runs
// the same three products. So:
//   forward  Y  = X . W^T   (B = W^T is a column-major view; also the LM head's logits)  TN
//   dgrad    dX = dY . W    (both row-major)                                              NN
//   wgrad    dW = dY^T . X  (A = dY^T is a column-major view)                              NT
// The MI250X TN penalty (devices.cpp) comes from AxoNN's measurement in this naming (docs/axonn.md section 5: "tn" =
// B column-major), so it lands on the forward GEMMs, as untuned torch runs them.
constexpr gpu::GemmLayout kForwardLayout = gpu::GemmLayout::TN;
constexpr gpu::GemmLayout kDgradLayout = gpu::GemmLayout::NN;
constexpr gpu::GemmLayout kWgradLayout = gpu::GemmLayout::NT;

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
  CpAttention cp;  ///< the attention's context parallelism (cp = 1: none)

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
  [[nodiscard]] CpAttention cp_attention() const {
    CpAttention a = cp;
    a.local = attention();
    return a;
  }
};

/// One stage's op stream.
class StageBuilder {
 public:
  StageBuilder(Plan& plan, std::uint32_t stage, const Shape& s, const LayerKernels& kernels, const TrainingSpec& t,
               bool overlap_dp)
      : out_(plan, plan.streams[stage]), s_(s), k_(kernels), training_(t), overlap_dp_(overlap_dp), stage_(stage) {}

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
  [[nodiscard]] double stage_params() const {
    double p = static_cast<double>(s_.v * s_.layers_per_chunk) * s_.layer_params();
    for (std::uint32_t c = 0; c < s_.v; ++c) p += vocab_matrices(c) * s_.embedding_params();
    return p;
  }
  static std::string tag(std::int64_t layer, const char* what) {
    std::string name = "L";  // appended piecewise: "L" + std::string&& trips GCC 12's -Wrestrict (bug 105329)
    name += std::to_string(layer);
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
    gathered_gemm(tag(layer, "mlp_up") + p, s_.w.mlp_up_out / tp, H, kForwardLayout);
    out_.compute(tag(layer, activation_name()) + p, k_.activation_forward(s_.ffn_elements()));
    reduced_gemm(tag(layer, "mlp_down") + p, H, s_.w.ffn / tp, kForwardLayout);
    out_.compute(tag(layer, "residual2") + p, k_.residual_forward(s_.hidden_elements()));
  }

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

  void layer_backward(std::int64_t layer) {
    const std::string p = ".bwd";
    const std::int64_t H = s_.H;
    out_.compute(tag(layer, "residual2") + p, k_.residual_backward(s_.hidden_elements()));
    row_backward(tag(layer, "mlp_down") + p, H, s_.w.ffn);
    out_.compute(tag(layer, activation_name()) + p, k_.activation_backward(s_.ffn_elements()));
    column_backward(tag(layer, "mlp_up") + p, s_.w.mlp_up_out, H);
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
        out_.compute(tag(layer, "grads.accumulate"),
                     k_.grad_accumulation_add(s_.layer_params(), training_.dp_grad_bytes));
      reduce_bucket(tag(layer, "grads"), s_.layer_params(), last_micro_batch);
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
  void reduce_bucket(const std::string& name, double params, bool last_micro_batch) {
    const double bytes = training_.dp_grad_bytes * params;
    if (s_.zero >= 2) {
      Handle h = out_.start(name + ".dp_reduce_scatter", CollKind::ReduceScatter, kMegDimDp, bytes);
      if (overlap_dp_)
        chunk_reductions_.push_back(h);
      else
        out_.wait(h);
    } else if (overlap_dp_ && last_micro_batch) {
      CollKind kind = s_.zero == 1 ? CollKind::ReduceScatter : CollKind::AllReduce;
      flush_reductions_.push_back(
          out_.start(name + (s_.zero == 1 ? ".dp_reduce_scatter" : ".dp_all_reduce"), kind, kMegDimDp, bytes));
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
    }
    for (Handle h : flush_reductions_) out_.wait(h);
    flush_reductions_.clear();
  }

  void optimizer() {
    out_.set_phase(Phase::Optimizer);
    const double local = stage_params() / (s_.zero >= 1 ? s_.dp : 1);
    out_.compute("optimizer.adam", k_.optimizer_step(local, training_.dp_grad_bytes));
    if (s_.zero == 1 || s_.zero == 2)
      out_.collective("params.dp_all_gather", CollKind::AllGather, kMegDimDp, s_.e * stage_params());
    const double layer_weights = static_cast<double>(s_.v * s_.layers_per_chunk) * s_.layer_params();
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
  s.cp = {cfg.cp, cfg.cp_comm, kMegDimCp, {}, kv_block_bytes(model, cfg.tp, cfg.cp, cfg.micro_batch, s.e)};
  const LayerKernels kernels(model, training);

  Plan plan;
  plan.grid = ProcessGrid({{"tp", cfg.tp}, {cfg.cp > 1 ? "dp_cp" : "dp", cfg.dp_cp()}, {"pp", cfg.pp}});
  if (cfg.cp > 1) (void)plan.grid.add_nested("cp", kMegDimDp, cfg.cp);
  plan.role_dim = kMegDimPp;
  plan.streams.resize(cfg.pp);  // never resized again: builders hold references into it
  for (std::uint32_t stage = 0; stage < cfg.pp; ++stage)
    StageBuilder(plan, stage, s, kernels, training, overlap.dp).build();
  return plan;
}

}  // namespace exasim::schedule
