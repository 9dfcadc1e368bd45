#include "sim/schedule/axonn4d.hpp"

#include "sim/schedule/internal/layer_kernels.hpp"
#include "sim/schedule/stream_builder.hpp"

#include <stdexcept>

namespace exasim::schedule {

namespace {

/// One fully-connected layer of the transformer block: W is n_out x k_in.
struct Linear {
  const char* name;
  std::int64_t n_out;
  std::int64_t k_in;
  bool transposed;
};

/// Everything a builder needs, derived once.
struct Shape {
  double tokens;  ///< b * S on this GPU
  std::int64_t b;
  std::int64_t tokens_i;
  std::int64_t H, S, V, L;
  LayerWidths w;  ///< the layer's tensor widths before the x/y splits
  std::uint32_t gx, gy, gz, gdata;
  double e;                 ///< bytes per activation / weight element (dtype)
  double layer_params;      ///< weights of one layer (ModelSpec::layer_params)
  double embedding_params;  ///< vocabulary matrices (one tied, or embedding + LM head)
};

class Axonn4DBuilder {
 public:
  Axonn4DBuilder(Plan& plan, const Shape& s, const LayerKernels& kernels, const TrainingSpec& t, const OverlapSpec& o)
      : out_(plan, plan.streams.front()), s_(s), k_(kernels), training_(t), overlap_(o) {
    linears_ = {{"qkv", s.w.qkv_out, s.H, false},
                {"attn_out", s.H, s.H, true},
                {"mlp_up", s.w.mlp_up_out, s.H, false},
                {"mlp_down", s.H, s.w.ffn, true}};
  }

  void build() {
    forward_pass();
    lm_head();
    backward_pass();
    optimizer();
  }

 private:
  // Input features are split over `in_dim`, output features over `out_dim`.
  [[nodiscard]] std::uint8_t in_dim(const Linear& l) const { return l.transposed ? kDimY : kDimX; }
  [[nodiscard]] std::uint8_t out_dim(const Linear& l) const { return l.transposed ? kDimX : kDimY; }
  [[nodiscard]] std::int64_t split(std::uint8_t dim) const { return dim == kDimX ? s_.gx : s_.gy; }
  [[nodiscard]] double weight_block_bytes(const Linear& l) const {
    return s_.e * static_cast<double>(l.n_out) * static_cast<double>(l.k_in) / (s_.gx * s_.gy);
  }
  static std::string tag(std::int64_t layer, const char* what) {
    // Appended piece by piece: "L" + std::string&& trips GCC 12's -Wrestrict false positive (bug 105329).
    std::string t = "L";
    t += std::to_string(layer);
    t += '.';
    t += what;
    return t;
  }

  Handle gather_weights(std::int64_t layer, const Linear& l) {
    return out_.start(tag(layer, l.name) + ".z_all_gather", CollKind::AllGather, kDimZ, weight_block_bytes(l));
  }

  // Forward of one linear layer: wait for (or fetch) its weights, prefetch the next one's, GEMM, all-reduce.
  void linear_forward(std::int64_t layer, std::size_t index, bool last_of_chain, const char* pass) {
    const Linear& l = linears_[index];
    if (overlap_.oag) {
      out_.wait(prefetched_);
      prefetched_ = StreamBuilder::kNoHandle;
      if (!last_of_chain) {
        std::int64_t next_layer = index + 1 < linears_.size() ? layer : layer + 1;
        prefetched_ = gather_weights(next_layer, linears_[(index + 1) % linears_.size()]);
      }
    } else {
      out_.wait(gather_weights(layer, l));
    }
    const std::string name = tag(layer, l.name) + "." + pass;
    out_.compute(name + ".gemm", gemm(s_.tokens_i, l.n_out / split(out_dim(l)), l.k_in / split(in_dim(l))));
    double out_bytes = s_.e * s_.tokens * static_cast<double>(l.n_out / split(out_dim(l)));
    out_.collective(name + ".all_reduce", CollKind::AllReduce, in_dim(l), out_bytes);
  }

  [[nodiscard]] gpu::Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k,
                                 gpu::GemmLayout layout = gpu::GemmLayout::NN) const {
    return gpu::gemm(m, n, k, layout, k_.dtype());
  }

  // Elements of the tensors the elementwise kernels of one layer stream: the hidden slice (hidden split
  // over x between layers) and the MLP's inner slice (ffn split over y).
  [[nodiscard]] double hidden_elements() const { return s_.tokens * static_cast<double>(s_.H / s_.gx); }
  [[nodiscard]] double ffn_elements() const { return s_.tokens * static_cast<double>(s_.w.ffn / s_.gy); }
  [[nodiscard]] const char* activation_name() const { return s_.w.activation_name(); }

  [[nodiscard]] AttentionSlice attention() const {  // heads split over y
    return {s_.b, s_.S, s_.w.heads / s_.gy, s_.w.kv_heads / s_.gy, s_.w.head_dim};
  }

  void layer_forward(std::int64_t layer, const char* pass, bool chain_continues) {
    const std::string p = std::string(".") + pass;
    out_.compute(tag(layer, "ln1") + p, k_.norm_forward(hidden_elements()));
    linear_forward(layer, 0, false, pass);
    out_.compute(tag(layer, "attention") + p, k_.attention_forward(attention()));
    linear_forward(layer, 1, false, pass);
    out_.compute(tag(layer, "residual1") + p, k_.residual_forward(hidden_elements()));
    out_.compute(tag(layer, "ln2") + p, k_.norm_forward(hidden_elements()));
    linear_forward(layer, 2, false, pass);
    out_.compute(tag(layer, activation_name()) + p, k_.activation_forward(ffn_elements()));
    linear_forward(layer, 3, !chain_continues, pass);
    out_.compute(tag(layer, "residual2") + p, k_.residual_forward(hidden_elements()));
  }

  void forward_pass() {
    out_.set_phase(Phase::Forward);
    out_.compute("embedding.fwd", LayerKernels::elementwise(s_.e * hidden_elements()));
    if (k_.dropout()) out_.compute("embedding.dropout.fwd", k_.dropout_forward(hidden_elements()));
    if (overlap_.oag) prefetched_ = gather_weights(0, linears_[0]);
    for (std::int64_t layer = 0; layer < s_.L; ++layer) layer_forward(layer, "fwd", layer + 1 < s_.L);
  }

  void lm_head() {
    // Vocab-parallel logits over the X x Y group: [b*S x H] x [H x V/(gx*gy)], then the loss.
    std::int64_t local_vocab = s_.V / (s_.gx * s_.gy);
    out_.set_phase(Phase::Forward);
    const double logits = s_.tokens * static_cast<double>(local_vocab);
    out_.compute("lm_head.fwd.gemm", gemm(s_.tokens_i, local_vocab, s_.H));
    out_.compute("cross_entropy.fwd", LayerKernels::elementwise(3 * s_.e * logits));
    out_.set_phase(Phase::Backward);
    out_.compute("cross_entropy.bwd", LayerKernels::elementwise(2 * s_.e * logits));
    out_.compute("lm_head.bwd.dx_gemm", gemm(s_.tokens_i, s_.H, local_vocab));
    out_.compute("lm_head.bwd.dw_gemm", gemm(local_vocab, s_.H, s_.tokens_i, gpu::GemmLayout::NT));
  }

  void linear_backward(std::int64_t layer, const Linear& l, std::vector<Handle>& reduce_scatters) {
    const std::string name = tag(layer, l.name) + ".bwd";
    const std::int64_t in_local = l.k_in / split(in_dim(l)), out_local = l.n_out / split(out_dim(l));
    out_.compute(name + ".dx_gemm", gemm(s_.tokens_i, in_local, out_local));
    double dx_bytes = s_.e * s_.tokens * static_cast<double>(in_local);
    Handle ar = out_.start(name + ".all_reduce", CollKind::AllReduce, out_dim(l), dx_bytes);
    if (!overlap_.oar) out_.wait(ar);
    // dW = dY^T X: AxoNN's tuned_matmul picks the best layout for the forward and dX GEMMs (NN here) but
    // leaves the dW GEMM untuned (docs/axonn.md section 5), so it runs as torch hands a transposed-A product to BLAS:
    // NT (kernel.hpp).
    out_.compute(name + ".dw_gemm", gemm(out_local, in_local, s_.tokens_i, gpu::GemmLayout::NT));
    if (overlap_.oar) out_.wait(ar);
    Handle rs = out_.start(name + ".z_reduce_scatter", CollKind::ReduceScatter, kDimZ, weight_block_bytes(l));
    if (overlap_.ors) {
      reduce_scatters.push_back(rs);
    } else {
      out_.wait(rs);
    }
  }

  void layer_backward(std::int64_t layer, std::vector<Handle>& reduce_scatters) {
    const std::string p = ".bwd";
    out_.compute(tag(layer, "residual2") + p, k_.residual_backward(hidden_elements()));
    linear_backward(layer, linears_[3], reduce_scatters);
    out_.compute(tag(layer, activation_name()) + p, k_.activation_backward(ffn_elements()));
    linear_backward(layer, linears_[2], reduce_scatters);
    out_.compute(tag(layer, "ln2") + p, k_.norm_backward(hidden_elements()));
    out_.compute(tag(layer, "residual1") + p, k_.residual_backward(hidden_elements()));
    linear_backward(layer, linears_[1], reduce_scatters);
    if (training_.selective_recompute()) {
      // Selective recomputation: the attention core's activations were dropped after forward.
      out_.set_phase(Phase::Recompute);
      out_.compute(tag(layer, "attention.recompute"), k_.attention_forward(attention()));
      out_.set_phase(Phase::Backward);
    }
    out_.compute(tag(layer, "attention") + p, k_.attention_backward(attention()));
    linear_backward(layer, linears_[0], reduce_scatters);
    out_.compute(tag(layer, "ln1") + p, k_.norm_backward(hidden_elements()));
  }

  [[nodiscard]] double layer_grad_shard_bytes() const {
    return training_.dp_grad_bytes * s_.layer_params / (s_.gx * s_.gy * s_.gz);
  }
  [[nodiscard]] double embedding_grad_bytes(double bytes_per_elem) const {
    return bytes_per_elem * s_.embedding_params / (s_.gx * s_.gy);
  }

  void backward_pass() {
    std::vector<Handle> dp_handles;
    std::vector<Handle> pending_rs;  // reduce-scatters of the layer whose DP all-reduce is next
    std::int64_t pending_layer = -1;
    for (std::int64_t layer = s_.L - 1; layer >= 0; --layer) {
      if (training_.full_recompute()) {
        out_.set_phase(Phase::Recompute);
        if (overlap_.oag) prefetched_ = gather_weights(layer, linears_[0]);
        layer_forward(layer, "recompute", false);
      }
      out_.set_phase(Phase::Backward);
      std::vector<Handle> layer_rs;
      layer_backward(layer, layer_rs);
      if (overlap_.dp) {
        // One layer behind: the previous layer's reduce-scatters had this layer's backward to finish.
        if (pending_layer >= 0) dp_handles.push_back(data_all_reduce(pending_layer, pending_rs));
        pending_rs = std::move(layer_rs);
        pending_layer = layer;
      } else {
        for (Handle h : layer_rs) rs_in_flight_.push_back(h);
      }
    }
    out_.set_phase(Phase::Backward);
    if (overlap_.dp && pending_layer >= 0) dp_handles.push_back(data_all_reduce(pending_layer, pending_rs));
    for (Handle h : rs_in_flight_) out_.wait(h);  // ORS: drained at the end of backward
    rs_in_flight_.clear();
    out_.collective("embedding.z_all_reduce", CollKind::AllReduce, kDimZ, embedding_grad_bytes(s_.e));
    if (overlap_.dp) {
      dp_handles.push_back(out_.start("embedding.data_all_reduce", CollKind::AllReduce, kDimData,
                                      embedding_grad_bytes(training_.dp_grad_bytes)));
      for (Handle h : dp_handles) out_.wait(h);
    } else {
      double total =
          static_cast<double>(s_.L) * layer_grad_shard_bytes() + embedding_grad_bytes(training_.dp_grad_bytes);
      out_.collective("grads.data_all_reduce", CollKind::AllReduce, kDimData, total);
    }
  }

  Handle data_all_reduce(std::int64_t layer, const std::vector<Handle>& reduce_scatters) {
    for (Handle h : reduce_scatters) out_.wait(h);
    return out_.start(tag(layer, "grads.data_all_reduce"), CollKind::AllReduce, kDimData, layer_grad_shard_bytes());
  }

  void optimizer() {
    out_.set_phase(Phase::Optimizer);
    const double local_params =
        static_cast<double>(s_.L) * s_.layer_params / (s_.gx * s_.gy * s_.gz) + s_.embedding_params / (s_.gx * s_.gy);
    out_.compute("optimizer.adam", k_.optimizer_step(local_params, training_.dp_grad_bytes));
  }

  StreamBuilder out_;
  Shape s_;
  const LayerKernels& k_;
  TrainingSpec training_;
  OverlapSpec overlap_;
  std::vector<Linear> linears_;
  Handle prefetched_ = StreamBuilder::kNoHandle;
  std::vector<Handle> rs_in_flight_;
};

}  // namespace

Infeasibility axonn4d_infeasibility(const ModelSpec& m, const Axonn4DConfig& g, std::int64_t global_batch) {
  auto divides = [](std::int64_t d, std::int64_t n) { return d > 0 && n % d == 0; };
  auto str = [](auto v) { return std::to_string(v); };
  if (m.moe.enabled())
    return {"model.experts",
            "AxoNN 4D's plan has no mixture of experts: use parallel.scheme megatron (expert "
            "parallelism, parallel.ep)"};
  if (!divides(std::int64_t{g.gdata} * g.gz, global_batch))
    return {"training.global_batch", "global_batch " + str(global_batch) + " is not divisible by gdata*gz = " +
                                         str(g.gdata * g.gz) + " (the batch is split over data and z)"};
  if (!divides(g.gy, m.heads))
    return {"parallel.gy", "model heads " + str(m.heads) + " are not divisible by gy = " + str(g.gy) +
                               " (attention heads are split over y)"};
  if (!divides(g.gy, m.kv()))
    return {"parallel.gy", "model kv_heads " + str(m.kv()) + " are not divisible by gy = " + str(g.gy) +
                               " (key/value head groups are split over y)"};
  if (!divides(g.gy, m.ffn()))
    return {"parallel.gy", "model ffn_hidden " + str(m.ffn()) + " is not divisible by gy = " + str(g.gy) +
                               " (the MLP's inner width is split over y)"};
  if (!divides(g.gx, m.hidden))
    return {"parallel.gx", "model hidden " + str(m.hidden) + " is not divisible by gx = " + str(g.gx)};
  if (!divides(g.gy, m.hidden))
    return {"parallel.gy", "model hidden " + str(m.hidden) + " is not divisible by gy = " + str(g.gy)};
  if (!divides(g.gz, m.hidden / g.gx * (m.hidden / g.gy)))
    return {"parallel.gz", "the weight block hidden/gx * hidden/gy = " + str(m.hidden / g.gx * (m.hidden / g.gy)) +
                               " is not divisible by gz = " + str(g.gz)};
  if (!divides(std::int64_t{g.gx} * g.gy, m.vocab))
    return {"model.vocab", "model vocab " + str(m.vocab) + " is not divisible by gx*gy = " + str(g.gx * g.gy) +
                               " (the vocabulary is split over x and y)"};
  return {};
}

Plan build_axonn4d_plan(const ModelSpec& model, const Axonn4DConfig& g, const TrainingSpec& training,
                        const OverlapSpec& overlap) {
  if (auto bad = axonn4d_infeasibility(model, g, training.global_batch); !bad.why.empty())
    throw std::invalid_argument("axonn4d: " + bad.why);
  Plan plan;
  plan.grid = ProcessGrid({{"x", g.gx}, {"y", g.gy}, {"z", g.gz}, {"data", g.gdata}});
  plan.streams.resize(1);
  Shape s{};
  s.b = training.global_batch / (g.gdata * g.gz);
  s.tokens_i = s.b * model.seq_len;
  s.tokens = static_cast<double>(s.tokens_i);
  s.H = model.hidden;
  s.S = model.seq_len;
  s.V = model.vocab;
  s.L = model.layers;
  s.w = LayerWidths::of(model);
  s.e = training.element_bytes();
  s.layer_params = model.layer_params();
  s.embedding_params = model.embedding_params();
  s.gx = g.gx;
  s.gy = g.gy;
  s.gz = g.gz;
  s.gdata = g.gdata;
  const LayerKernels kernels(model, training);
  Axonn4DBuilder(plan, s, kernels, training, overlap).build();
  return plan;
}

}  // namespace exasim::schedule
