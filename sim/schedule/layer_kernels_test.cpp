#include "sim/schedule/internal/layer_kernels.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/flops.hpp"
#include "sim/schedule/megatron.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace exasim;
using namespace exasim::schedule;
using gpu::MemoryFamily;

namespace {

ModelSpec gpt() { return ModelSpec{"gpt", 4, 1024, 16, 512, 4096}; }

ModelSpec llama_like() {
  ModelSpec m{"llama", 4, 1024, 16, 512, 4096};
  m.ffn_hidden = 2816;
  m.kv_heads = 4;
  m.activation = Activation::Swiglu;
  m.tied_embeddings = false;
  return m;
}

TrainingSpec training(AttentionImpl attention, double dropout, gpu::DType dtype = gpu::DType::Bf16) {
  TrainingSpec t;
  t.global_batch = 8;
  t.recompute = Recompute::None;
  t.attention = attention;
  t.dropout = dropout;
  t.dtype = dtype;
  return t;
}

const NamedKernel& find(const std::vector<NamedKernel>& ks, const std::string& suffix) {
  for (const auto& k : ks)
    if (k.suffix == suffix) return k;
  FAIL("no kernel " << suffix);
  return ks.front();
}

/// Sum of the flops of every compute op of a stream (optionally only one phase).
double stream_flops(const Plan& plan, const OpStream& stream) {
  double flops = 0;
  for (const auto& op : stream.ops)
    if (op.type == OpType::Compute) flops += plan.kernels[op.kernel].flops;
  return flops;
}

/// The kernel of the first op whose name is `name`.
const gpu::Kernel& kernel_named(const Plan& plan, const std::string& name) {
  for (const auto& stream : plan.streams)
    for (const auto& op : stream.ops)
      if (op.type == OpType::Compute && plan.names[op.name] == name) return plan.kernels[op.kernel];
  FAIL("no op named " << name);
  return plan.kernels.front();
}

bool has_op(const Plan& plan, const std::string& fragment) {
  for (const auto& name : plan.names)
    if (name.find(fragment) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("flash attention: causal flops and Q, K, V, O bytes at the key/value width (GQA)", "[unit]") {
  const AttentionSlice a{2, 512, 8, 2, 64};  // 2 sequences, 8 query heads, 2 kv heads of 64
  LayerKernels k(gpt(), training(AttentionImpl::Flash, 0.1));
  auto fwd = k.attention_forward(a);
  REQUIRE(fwd.size() == 1);
  CHECK(fwd[0].kernel.kind == gpu::KernelKind::FlashAttention);
  CHECK(fwd[0].kernel.flops == Approx(2.0 * 2 * 512 * 512 * (8 * 64)));
  CHECK(fwd[0].kernel.bytes == Approx(2.0 * 2 * 512 * (2 * 8 * 64 + 2 * 2 * 64)));
  auto bwd = k.attention_backward(a);
  REQUIRE(bwd.size() == 1);
  CHECK(bwd[0].kernel.flops == Approx(2.5 * fwd[0].kernel.flops));
  CHECK(bwd[0].kernel.bytes == Approx(2 * fwd[0].kernel.bytes));
}

TEST_CASE("standard attention: batched GEMMs per head, softmax and dropout over the s x s scores", "[unit]") {
  const AttentionSlice a{2, 512, 8, 8, 64};
  const double b = 2, s = 512, h = 8, d = 64, P = b * h * s * s;
  for (double e : {2.0, 4.0}) {
    LayerKernels k(gpt(), training(AttentionImpl::Standard, 0.1, e == 2 ? gpu::DType::Fp16 : gpu::DType::Fp32));
    auto fwd = k.attention_forward(a);
    REQUIRE(fwd.size() == 4);
    const auto& scores = find(fwd, ".scores_bmm").kernel;
    CHECK(scores.kind == gpu::KernelKind::Gemm);
    CHECK(scores.batch == 16);
    CHECK((scores.m == 512 && scores.n == 512 && scores.k == 64));
    CHECK(scores.flops == Approx(2 * b * h * s * s * d));  // full s x s: Megatron computes the masked half
    CHECK(scores.dtype == (e == 2 ? gpu::DType::Fp16 : gpu::DType::Fp32));
    CHECK(find(fwd, ".softmax").kernel.family == MemoryFamily::Softmax);
    CHECK(find(fwd, ".softmax").kernel.bytes == Approx(2 * e * P));
    CHECK(find(fwd, ".dropout").kernel.family == MemoryFamily::Dropout);
    CHECK(find(fwd, ".dropout").kernel.bytes == Approx((2 * e + 1) * P));
    CHECK(find(fwd, ".context_bmm").kernel.flops == Approx(2 * b * h * s * s * d));
    auto bwd = k.attention_backward(a);
    REQUIRE(bwd.size() == 6);
    double bmm_flops = 0;
    for (const auto& nk : bwd)
      if (nk.kernel.kind == gpu::KernelKind::Gemm) bmm_flops += nk.kernel.flops;
    CHECK(bmm_flops == Approx(4 * 2 * b * h * s * s * d));  // dV, dP, dQ, dK
    CHECK(find(bwd, ".softmax").kernel.bytes == Approx(3 * e * P));
    CHECK(find(bwd, ".dropout").kernel.bytes == Approx((2 * e + 1) * P));
  }
  LayerKernels no_dropout(gpt(), training(AttentionImpl::Standard, 0));
  CHECK(no_dropout.attention_forward(a).size() == 3);
  CHECK(no_dropout.attention_backward(a).size() == 5);
}

TEST_CASE("memory-bound kernels: bytes per element and family", "[unit]") {
  const double n = 1000;
  LayerKernels k(gpt(), training(AttentionImpl::Flash, 0.1));
  CHECK(k.norm_forward(n).bytes == 2 * 2 * n);
  CHECK(k.norm_backward(n).bytes == 3 * 2 * n);
  CHECK(k.norm_forward(n).family == MemoryFamily::Norm);
  CHECK(k.residual_forward(n).bytes == (3 * 2 + 1) * n);  // bias-dropout-add writes its mask
  CHECK(k.residual_forward(n).family == MemoryFamily::Dropout);
  CHECK(k.dropout_backward(n).bytes == (2 * 2 + 1) * n);
  const auto residual = k.residual_backward(n);  // the mask, then the two gradients summed
  REQUIRE(residual.size() == 2);
  CHECK((residual[0].suffix == ".dropout" && residual[0].kernel.bytes == (2 * 2 + 1) * n));
  CHECK((residual[1].suffix.empty() && residual[1].kernel.bytes == 3 * 2 * n));
  CHECK(k.activation_forward(n).bytes == 2 * 2 * n);  // GeLU
  CHECK(k.activation_backward(n).bytes == 3 * 2 * n);
  CHECK(k.activation_forward(n).family == MemoryFamily::Activation);
  CHECK(k.optimizer_step(n, 4).bytes == (4 + 26) * n);
  CHECK(k.optimizer_step(n, 4).family == MemoryFamily::Optimizer);
  CHECK(k.grad_accumulation_add(n, 4).bytes == (2 + 8) * n);

  LayerKernels swiglu(llama_like(), training(AttentionImpl::Flash, 0));
  CHECK(swiglu.activation_forward(n).bytes == 3 * 2 * n);
  CHECK(swiglu.activation_backward(n).bytes == 5 * 2 * n);
  CHECK(swiglu.residual_forward(n).bytes == 3 * 2 * n);  // no dropout: a plain add
  CHECK(swiglu.residual_forward(n).family == MemoryFamily::Elementwise);
  CHECK(swiglu.residual_backward(n).size() == 1);  // no dropout: the sum alone

  LayerKernels fp32(gpt(), training(AttentionImpl::Flash, 0, gpu::DType::Fp32));
  CHECK(fp32.norm_forward(n).bytes == 2 * 4 * n);
  CHECK(fp32.optimizer_step(n, 4).bytes == (4 + 24) * n);  // no master copy, no half weight
}

TEST_CASE("SwiGLU and GQA shapes: parameters and the Megatron GEMMs", "[unit]") {
  const ModelSpec m = llama_like();
  const double H = 1024, F = 2816, kv = 4 * 64;
  CHECK(m.qkv_out() == 1024 + 2 * 256);
  CHECK(m.mlp_up_out() == 2 * 2816);
  CHECK(m.layer_params() == Approx(H * (H + 2 * kv) + H * H + 3 * H * F));
  CHECK(m.parameters() == Approx(4 * m.layer_params() + 2 * 4096 * H));  // untied: embedding + LM head
  CHECK(gpt().layer_params() == Approx(12 * H * H));

  MegatronConfig c;
  c.tp = 2;
  const auto plan = build_megatron_plan(m, c, training(AttentionImpl::Flash, 0));
  const auto& qkv = kernel_named(plan, "L0.qkv.fwd.gemm");
  CHECK((qkv.m == 512 && qkv.n == (1024 + 512) / 2 && qkv.k == 1024));
  const auto& up = kernel_named(plan, "L0.mlp_up.fwd.gemm");
  CHECK(up.n == 2 * 2816 / 2);
  const auto& down = kernel_named(plan, "L0.mlp_down.fwd.gemm");
  CHECK((down.n == 1024 && down.k == 2816 / 2));
  const auto& attention = kernel_named(plan, "L0.attention.fwd");
  CHECK(attention.bytes == Approx(2.0 * 512 * (2 * 8 * 64 + 2 * 2 * 64)));  // 8 query, 2 kv heads per rank
  CHECK(has_op(plan, "L0.swiglu.fwd"));
  CHECK_FALSE(has_op(plan, "tied_grad"));  // untied: nothing to exchange

  MegatronConfig bad;
  bad.tp = 8;  // 4 kv heads cannot be split 8 ways
  CHECK(megatron_infeasibility(m, bad, training(AttentionImpl::Flash, 0), 8).field == "parallel.tp");
  CHECK(axonn4d_infeasibility(m, {1, 8, 1, 1}, 8).field == "parallel.gy");
}

TEST_CASE("the plan's GEMM flops add up to the per-term flop count for any shape", "[unit]") {
  // Standard attention computes the full s x s scores, as Megatron's formula counts them; without
  // recomputation the plan's GEMMs are 3x the forward, except the LM head (6 B S H V for 3 passes where
  // Megatron's formula writes 72/16 = 4.5): the plan must equal F(72) + 1.5 B S H V.
  for (const ModelSpec& m : {gpt(), llama_like()}) {
    const TrainingSpec t = training(AttentionImpl::Standard, 0.1);
    const double B = 8, S = m.seq_len, H = m.hidden, V = m.vocab;
    const double expected = model_flops(m, 8) + 1.5 * B * S * H * V;

    MegatronConfig c;
    c.tp = 2;
    c.pp = 2;
    c.dp = 2;
    const auto meg = build_megatron_plan(m, c, t);
    double total = 0;
    for (Rank r = 0; r < meg.grid.world_size(); ++r) total += stream_flops(meg, meg.stream_of(r));
    INFO(m.name);
    CHECK(total == Approx(expected).epsilon(1e-9));

    // AxoNN runs the attention core of its y-shard of heads on each of the gx ranks that share it (the
    // QKV output is all-reduced over x): gx - 1 redundant copies of 6 batched GEMMs of 2 B S^2 H / heads
    // each per head.
    const double gx = 2, L = m.layers;
    const auto axonn = build_axonn4d_plan(m, {2, 2, 1, 2}, t, {});
    CHECK(8 * stream_flops(axonn, axonn.streams.front()) ==
          Approx(expected + (gx - 1) * 12 * B * S * S * H * L).epsilon(1e-9));
  }
}

TEST_CASE("selective recomputation repeats only the attention core, and its flops join the hardware count", "[unit]") {
  const ModelSpec m = gpt();
  MegatronConfig c;
  c.tp = 2;
  for (AttentionImpl impl : {AttentionImpl::Flash, AttentionImpl::Standard}) {
    TrainingSpec t = training(impl, 0.1);
    t.recompute = Recompute::Selective;
    const auto plan = build_megatron_plan(m, c, t);
    std::size_t recomputed = 0, attention = 0;
    for (const auto& op : plan.streams.front().ops) {
      if (op.phase != Phase::Recompute) continue;
      ++recomputed;
      attention += plan.names[op.name].find(".attention.recompute") != std::string::npos;
    }
    CHECK(recomputed > 0);
    CHECK(recomputed == attention);
    // The recomputed forward equals the forward attention core, layer by layer.
    const std::string first = impl == AttentionImpl::Flash ? "" : ".scores_bmm";
    CHECK(kernel_named(plan, "L1.attention.recompute" + first).flops ==
          kernel_named(plan, "L1.attention.fwd" + first).flops);
  }
  const double B = 8, S = m.seq_len, L = m.layers, H = m.hidden;
  CHECK(hardware_flops(m, 8, Recompute::Selective) == Approx(model_flops(m, 8) + 4 * B * S * S * L * H));
  CHECK(hardware_flops(m, 8, Recompute::Full) == Approx(model_flops(m, 8) * 96 / 72));
}

TEST_CASE("dtype sets collective and pipeline bytes: fp32 doubles what bf16 sends", "[unit]") {
  MegatronConfig c;
  c.tp = 2;
  c.pp = 2;
  c.scatter_gather = false;
  const auto bf16 = build_megatron_plan(llama_like(), c, training(AttentionImpl::Flash, 0));
  const auto fp32 = build_megatron_plan(llama_like(), c, training(AttentionImpl::Flash, 0, gpu::DType::Fp32));
  const auto b = wire_bytes_per_dim(bf16, 0), f = wire_bytes_per_dim(fp32, 0);
  CHECK(f[kMegDimPp] == Approx(2 * b[kMegDimPp]));  // untied: the pipeline carries only activations
  CHECK(kernel_named(fp32, "L0.qkv.fwd.gemm").dtype == gpu::DType::Fp32);
  CHECK(kernel_named(bf16, "L0.qkv.fwd.gemm").dtype == gpu::DType::Bf16);
  // Cross-entropy reductions are fp32 in both, the activations' all-reduces double.
  CHECK(f[kMegDimTp] > 1.9 * b[kMegDimTp]);
}

TEST_CASE("scatter-gather: a TP rank sends 1/tp of each pipeline tensor and all-gathers what it receives", "[unit]") {
  MegatronConfig c;
  c.tp = 4;
  c.pp = 2;
  const TrainingSpec t = training(AttentionImpl::Flash, 0);
  const auto on = build_megatron_plan(gpt(), c, t);
  c.scatter_gather = false;
  const auto off = build_megatron_plan(gpt(), c, t);
  const double tensor = 2.0 * 512 * 1024;  // micro-batch 1 x seq x hidden, bf16
  const double micro = 8;
  for (Rank r : {0u, 4u}) {  // a rank of each stage
    const auto with = wire_bytes_per_dim(on, r), without = wire_bytes_per_dim(off, r);
    // Each stage sends `micro` tensors (activations or gradients) and receives as many.
    CHECK(without[kMegDimPp] - with[kMegDimPp] == Approx(micro * tensor * (1 - 1.0 / 4)));
    CHECK(with[kMegDimTp] - without[kMegDimTp] == Approx(micro * tensor * 3.0 / 4));
  }
  CHECK(has_op(on, "pp.recv_activation.tp_all_gather"));
  CHECK_FALSE(has_op(off, "tp_all_gather"));
}

TEST_CASE("fp8: linear GEMMs in fp8, cast-transposes of 4 B per element, the rest bf16", "[unit]") {
  const TrainingSpec t = training(AttentionImpl::Standard, 0.1, gpu::DType::Fp8);
  const LayerKernels fp8(llama_like(), t), bf16(llama_like(), training(AttentionImpl::Standard, 0.1));
  CHECK(fp8.dtype() == gpu::DType::Bf16);  // every kernel but the linear GEMMs
  CHECK(fp8.element_bytes() == 2);
  CHECK(fp8.linear_gemm(64, 32, 16, gpu::GemmLayout::TN).dtype == gpu::DType::Fp8);
  CHECK(bf16.linear_gemm(64, 32, 16, gpu::GemmLayout::TN).dtype == gpu::DType::Bf16);
  // Standard attention's batched GEMMs stay bf16 (Transformer Engine's default).
  for (const auto& k : fp8.attention_forward({1, 512, 16, 4, 64}))
    if (k.kernel.kind == gpu::KernelKind::Gemm) CHECK(k.kernel.dtype == gpu::DType::Bf16);
  // Read bf16 (2 B), write fp8 row- and column-major (1 + 1 B).
  const auto cast = fp8.fp8_cast(1000);
  REQUIRE(cast.size() == 1);
  CHECK(cast[0].suffix == ".fp8_cast");
  CHECK(cast[0].kernel.bytes == 4 * 1000);
  CHECK(cast[0].kernel.family == MemoryFamily::Elementwise);
  CHECK(fp8.fp8_weight_cast(1000).front().kernel.bytes == 4 * 1000);
  CHECK(bf16.fp8_cast(1000).empty());
  CHECK(bf16.fp8_weight_cast(1000).empty());
}

TEST_CASE("fp8 Megatron plan: the bf16 plan's ops plus casts, layer GEMMs in fp8, LM head bf16", "[unit]") {
  const ModelSpec m = llama_like();
  MegatronConfig c;
  c.tp = 2;
  c.sequence_parallel = true;
  const auto bf16 = build_megatron_plan(m, c, training(AttentionImpl::Flash, 0));
  const auto fp8 = build_megatron_plan(m, c, training(AttentionImpl::Flash, 0, gpu::DType::Fp8));
  auto is_cast = [](const std::string& name) { return name.ends_with(".fp8_cast"); };
  // With the casts taken out, the same ops in the same order.
  std::vector<std::string> plain, cast_free;
  for (const auto& op : bf16.streams[0].ops) plain.push_back(bf16.names[op.name]);
  double layer_casts = 0, weight_casts = 0;
  std::size_t casts = 0;
  for (const auto& op : fp8.streams[0].ops) {
    const std::string& name = fp8.names[op.name];
    const auto& k = fp8.kernels[op.kernel];
    if (op.type == OpType::Compute && is_cast(name)) {
      ++casts;
      (name.starts_with("params") ? weight_casts : layer_casts) += k.bytes;
      continue;
    }
    cast_free.push_back(name);
    if (op.type != OpType::Compute || k.kind != gpu::KernelKind::Gemm) continue;
    INFO(name);
    CHECK(k.dtype == (name.starts_with("lm_head") ? gpu::DType::Bf16 : gpu::DType::Fp8));
  }
  CHECK(cast_free == plain);
  // Per layer and micro-batch, 4 B per element of what TE casts (T tokens, h hidden, f ffn, tp 2, SP):
  // forward the QKV and MLP-up inputs (sequence shards, T h / tp each), the projection input (T h / tp)
  // and the MLP-down input (T f / tp); backward the row-parallel layers' output gradients (sequence shards,
  // T h / tp each) and the column-parallel ones' (T qkv_out / tp, T mlp_up_out / tp).
  const double T = m.seq_len, h = m.hidden, f = m.ffn(), tp = 2, micro = 8, L = m.layers;
  const double per_layer = 4 * T / tp * (5 * h + f + static_cast<double>(m.qkv_out() + m.mlp_up_out()));
  CHECK(casts == micro * L * 8 + 1);
  CHECK(layer_casts == Approx(micro * L * per_layer));
  // Once per iteration, the stage's linear weights: 4 B per parameter.
  CHECK(weight_casts == Approx(4 * L * m.layer_params() / tp));
}
