#include "sim/schedule/fsdp.hpp"

#include "sim/schedule/internal/layer_kernels.hpp"
#include "sim/schedule/stream_builder.hpp"

#include <stdexcept>

namespace exasim::schedule {

namespace {

/// A unit of FSDP's wrapping: what one all-gather fetches and one reduce-scatter reduces.
struct Unit {
  std::string name;
  double params = 0;
};

/// Everything the builder needs, derived once.
struct FsdpShape {
  std::int64_t H, S, T, V, L;  ///< T = micro_batch * S tokens per micro-batch
  std::int64_t micro_batch;
  LayerWidths w;
  std::uint32_t m;  ///< micro-batches
  std::uint32_t shard, replicas;
  bool tied, prefetch, reshard;
  double e;  ///< bytes per weight / activation element (dtype)
  double layer_params, vocab_params;

  [[nodiscard]] double tokens() const { return static_cast<double>(T); }
  [[nodiscard]] double hidden_elements() const { return tokens() * static_cast<double>(H); }
  [[nodiscard]] double ffn_elements() const { return tokens() * static_cast<double>(w.ffn); }
  [[nodiscard]] AttentionSlice attention() const { return {micro_batch, S, w.heads, w.kv_heads, w.head_dim}; }
  /// Parameters one rank holds: every unit's over the shard group.
  [[nodiscard]] double params() const { return static_cast<double>(L) * layer_params + vocab_params * (tied ? 1 : 2); }
};

std::string tag(std::int64_t layer, const char* what) {
  std::string name = "L";  // appended piecewise: "L" + std::string&& trips GCC 12's -Wrestrict (bug 105329)
  name += std::to_string(layer);
  name += '.';
  name += what;
  return name;
}

/// The all-gathers of one pass over a list of units, one unit ahead with prefetch.
class Gathers {
 public:
  Gathers(StreamBuilder& out, double element_bytes, bool prefetch)
      : out_(out), e_(element_bytes), prefetch_(prefetch) {}

  /// A pass over `units` begins (prefetch: the first gather is posted now).
  void begin(std::vector<Unit> units, const char* pass) {
    units_ = std::move(units);
    pass_ = pass;
    next_ = 0;
    if (prefetch_) posted_ = start(0);
  }
  /// The next unit's parameters are needed: wait for its gather (with prefetch, post the following one
  /// first, so that it runs beneath this unit's compute).
  void use() {
    if (prefetch_) {
      const Handle current = posted_;
      posted_ = start(next_ + 1);
      out_.wait(current);
    } else {
      out_.wait(start(next_));
    }
    ++next_;
  }

 private:
  Handle start(std::size_t i) {
    if (i >= units_.size()) return StreamBuilder::kNoHandle;
    return out_.start(units_[i].name + "." + pass_ + ".all_gather", CollKind::AllGather, kFsdpDimShard,
                      e_ * units_[i].params);
  }

  StreamBuilder& out_;
  double e_;
  bool prefetch_;
  std::vector<Unit> units_;
  const char* pass_ = "";
  std::size_t next_ = 0;
  Handle posted_ = StreamBuilder::kNoHandle;
};

class FsdpBuilder {
 public:
  FsdpBuilder(Plan& plan, const FsdpShape& s, const LayerKernels& kernels, const TrainingSpec& t)
      : out_(plan, plan.streams.front()), gathers_(out_, s.e, s.prefetch), s_(s), k_(kernels), training_(t) {}

  void build() {
    for (std::uint32_t i = 0; i < s_.m; ++i) {
      forward();
      backward();
    }
    out_.set_phase(Phase::Optimizer);
    out_.compute("optimizer.adam", k_.optimizer_step(s_.params() / s_.shard, training_.dp_grad_bytes));
  }

 private:
  // --- units ---------------------------------------------------------------------------------------
  /// Forward order: the embedding (the tied root), the layers, the untied LM head.
  [[nodiscard]] std::vector<Unit> forward_units() const {
    std::vector<Unit> units = {{"embedding", s_.vocab_params}};
    for (std::int64_t l = 0; l < s_.L; ++l) units.push_back({tag(l, "params"), s_.layer_params});
    if (!s_.tied) units.push_back({"lm_head", s_.vocab_params});
    return units;
  }
  /// Gathered again for backward (resharded after forward): the layers in reverse, then the untied
  /// embedding. The LM head and the tied root stay gathered from their forward.
  [[nodiscard]] std::vector<Unit> backward_units() const {
    std::vector<Unit> units;
    if (!s_.reshard) return units;
    for (std::int64_t l = s_.L - 1; l >= 0; --l) units.push_back({tag(l, "params"), s_.layer_params});
    if (!s_.tied) units.push_back({"embedding", s_.vocab_params});
    return units;
  }

  [[nodiscard]] gpu::Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) const {
    return gpu::gemm(m, n, k, layout, k_.dtype());
  }
  [[nodiscard]] const char* activation_name() const { return s_.w.activation_name(); }

  // --- forward -------------------------------------------------------------------------------------
  void layer_forward(std::int64_t layer, const char* pass) {
    const std::string p = std::string(".") + pass;
    const std::int64_t H = s_.H, T = s_.T;
    out_.compute(tag(layer, "ln1") + p, k_.norm_forward(s_.hidden_elements()));
    out_.compute(tag(layer, "qkv") + p + ".gemm", gemm(T, s_.w.qkv_out, H, kForwardLayout));
    out_.compute(tag(layer, "attention") + p, k_.attention_forward(s_.attention()));
    out_.compute(tag(layer, "attn_out") + p + ".gemm", gemm(T, H, H, kForwardLayout));
    out_.compute(tag(layer, "residual1") + p, k_.residual_forward(s_.hidden_elements()));
    out_.compute(tag(layer, "ln2") + p, k_.norm_forward(s_.hidden_elements()));
    out_.compute(tag(layer, "mlp_up") + p + ".gemm", gemm(T, s_.w.mlp_up_out, H, kForwardLayout));
    out_.compute(tag(layer, activation_name()) + p, k_.activation_forward(s_.ffn_elements()));
    out_.compute(tag(layer, "mlp_down") + p + ".gemm", gemm(T, H, s_.w.ffn, kForwardLayout));
    out_.compute(tag(layer, "residual2") + p, k_.residual_forward(s_.hidden_elements()));
  }

  void forward() {
    out_.set_phase(Phase::Forward);
    gathers_.begin(forward_units(), "fwd");
    gathers_.use();
    out_.compute("embedding.fwd", LayerKernels::elementwise(s_.e * s_.hidden_elements()));
    if (k_.dropout()) out_.compute("embedding.dropout.fwd", k_.dropout_forward(s_.hidden_elements()));
    for (std::int64_t l = 0; l < s_.L; ++l) {
      gathers_.use();
      layer_forward(l, "fwd");
    }
    if (!s_.tied) gathers_.use();
    const double logits = s_.tokens() * static_cast<double>(s_.V);
    out_.compute("final_ln.fwd", k_.norm_forward(s_.hidden_elements()));
    out_.compute("lm_head.fwd.gemm", gemm(s_.T, s_.V, s_.H, kForwardLayout));
    out_.compute("cross_entropy.fwd", LayerKernels::elementwise(3 * s_.e * logits));
  }

  // --- backward ------------------------------------------------------------------------------------
  void linear_backward(const std::string& name, std::int64_t n_out, std::int64_t k_in) {
    out_.compute(name + ".dx_gemm", gemm(s_.T, k_in, n_out, kDgradLayout));
    out_.compute(name + ".dw_gemm", gemm(n_out, k_in, s_.T, kWgradLayout));
  }

  void layer_backward(std::int64_t layer) {
    const std::string p = ".bwd";
    const std::int64_t H = s_.H;
    out_.compute(tag(layer, "residual2") + p, k_.residual_backward(s_.hidden_elements()));
    linear_backward(tag(layer, "mlp_down") + p, H, s_.w.ffn);
    out_.compute(tag(layer, activation_name()) + p, k_.activation_backward(s_.ffn_elements()));
    linear_backward(tag(layer, "mlp_up") + p, s_.w.mlp_up_out, H);
    out_.compute(tag(layer, "ln2") + p, k_.norm_backward(s_.hidden_elements()));
    out_.compute(tag(layer, "residual1") + p, k_.residual_backward(s_.hidden_elements()));
    linear_backward(tag(layer, "attn_out") + p, H, H);
    if (training_.selective_recompute()) {
      // Selective recomputation: the attention core's activations were dropped after forward.
      out_.set_phase(Phase::Recompute);
      out_.compute(tag(layer, "attention.recompute"), k_.attention_forward(s_.attention()));
      out_.set_phase(Phase::Backward);
    }
    out_.compute(tag(layer, "attention") + p, k_.attention_backward(s_.attention()));
    linear_backward(tag(layer, "qkv") + p, s_.w.qkv_out, H);
    out_.compute(tag(layer, "ln1") + p, k_.norm_backward(s_.hidden_elements()));
  }

  /// A unit's gradients are final: reduce-scatter them over the shard group, left in flight; with
  /// replicas, the previous unit's shard (whose reduce-scatter had this unit's backward to finish) is
  /// all-reduced over the replica group.
  void reduce(const std::string& name, double params) {
    const double bytes = training_.dp_grad_bytes * params;
    const Handle rs = out_.start(name + ".grads.reduce_scatter", CollKind::ReduceScatter, kFsdpDimShard, bytes);
    all_reduce_previous();
    previous_ = {name, params, rs};
  }
  void all_reduce_previous() {
    if (previous_.name.empty()) return;
    if (s_.replicas > 1) {
      out_.wait(previous_.reduce_scatter);
      in_flight_.push_back(out_.start(previous_.name + ".grads.all_reduce", CollKind::AllReduce, kFsdpDimReplica,
                                      training_.dp_grad_bytes * previous_.params / s_.shard));
    } else {
      in_flight_.push_back(previous_.reduce_scatter);
    }
    previous_ = {};
  }

  void backward() {
    out_.set_phase(Phase::Backward);
    gathers_.begin(backward_units(), "bwd");
    const double logits = s_.tokens() * static_cast<double>(s_.V);
    out_.compute("cross_entropy.bwd", LayerKernels::elementwise(2 * s_.e * logits));
    linear_backward("lm_head.bwd", s_.V, s_.H);
    out_.compute("final_ln.bwd", k_.norm_backward(s_.hidden_elements()));
    if (!s_.tied) reduce("lm_head", s_.vocab_params);
    for (std::int64_t l = s_.L - 1; l >= 0; --l) {
      if (s_.reshard) gathers_.use();
      if (training_.full_recompute()) {
        out_.set_phase(Phase::Recompute);
        layer_forward(l, "recompute");  // on the parameters gathered for the backward
        out_.set_phase(Phase::Backward);
      }
      layer_backward(l);
      reduce(tag(l, "params"), s_.layer_params);
    }
    if (s_.reshard && !s_.tied) gathers_.use();
    if (k_.dropout()) out_.compute("embedding.dropout.bwd", k_.dropout_backward(s_.hidden_elements()));
    out_.compute("embedding.bwd", LayerKernels::elementwise(s_.e * s_.hidden_elements()));
    reduce("embedding", s_.vocab_params);
    all_reduce_previous();
    for (const Handle h : in_flight_) out_.wait(h);
    in_flight_.clear();
  }

  /// The unit whose reduce-scatter was posted last, its all-reduce not yet.
  struct Pending {
    std::string name;
    double params = 0;
    Handle reduce_scatter = StreamBuilder::kNoHandle;
  };

  StreamBuilder out_;
  Gathers gathers_;
  const FsdpShape& s_;
  const LayerKernels& k_;
  TrainingSpec training_;
  Pending previous_;
  std::vector<Handle> in_flight_;
};

}  // namespace

std::int64_t fsdp_micro_batches(const FsdpConfig& cfg, const TrainingSpec& training) {
  const std::int64_t per_step = std::int64_t{cfg.gpus()} * cfg.micro_batch;
  return per_step > 0 ? training.global_batch / per_step : 0;
}

Infeasibility fsdp_infeasibility(const ModelSpec& m, const FsdpConfig& c, const TrainingSpec& t, std::uint32_t gpus) {
  auto str = [](auto v) { return std::to_string(v); };
  if (m.moe.enabled())
    return {"model.experts",
            "the FSDP plan has no mixture of experts: use parallel.scheme megatron (expert parallelism, "
            "parallel.ep)"};
  if (c.shard < 1) return {"parallel.shard", "must be at least 1, got " + str(c.shard)};
  if (c.micro_batch < 1) return {"parallel.micro_batch", "must be at least 1, got " + str(c.micro_batch)};
  if (gpus % c.shard != 0 || std::int64_t{c.shard} * c.replicas != gpus)
    return {"parallel.shard", "shard " + str(c.shard) + " must divide the number of GPUs, " + str(gpus) +
                                  " (hybrid sharding replicates groups of shard consecutive ranks)"};
  if (t.global_batch % gpus != 0)
    return {"training.global_batch", "global_batch " + str(t.global_batch) + " is not divisible by the " + str(gpus) +
                                         " GPUs (every GPU runs its own sequences)"};
  const std::int64_t local = t.global_batch / gpus;
  if (local % c.micro_batch != 0)
    return {"parallel.micro_batch", "micro_batch " + str(c.micro_batch) + " does not divide the " + str(local) +
                                        " sequences per GPU (global_batch / gpus)"};
  return {};
}

Plan build_fsdp_plan(const ModelSpec& model, const FsdpConfig& cfg, const TrainingSpec& training) {
  if (auto bad = fsdp_infeasibility(model, cfg, training, cfg.gpus()); !bad.why.empty())
    throw std::invalid_argument("fsdp: " + bad.field + ": " + bad.why);
  FsdpShape s{};
  s.H = model.hidden;
  s.S = model.seq_len;
  s.V = model.vocab;
  s.L = model.layers;
  s.micro_batch = cfg.micro_batch;
  s.T = s.micro_batch * s.S;
  s.w = LayerWidths::of(model);
  s.m = static_cast<std::uint32_t>(fsdp_micro_batches(cfg, training));
  s.tied = model.tied_embeddings;
  s.shard = cfg.shard;
  s.replicas = cfg.replicas;
  s.prefetch = cfg.prefetch;
  s.reshard = cfg.reshard_after_forward;
  s.e = training.element_bytes();
  s.layer_params = model.layer_params();
  s.vocab_params = static_cast<double>(model.vocab) * static_cast<double>(model.hidden);
  const LayerKernels kernels(model, training);

  Plan plan;
  plan.grid = ProcessGrid({{"shard", cfg.shard}, {"replica", cfg.replicas}});
  plan.streams.resize(1);
  FsdpBuilder(plan, s, kernels, training).build();
  return plan;
}

}  // namespace exasim::schedule
