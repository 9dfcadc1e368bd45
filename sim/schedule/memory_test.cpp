#include "sim/schedule/memory.hpp"

#include <catch2/catch.hpp>

using namespace exasim::schedule;

namespace {

// configs/models/gpt-175b.json
const ModelSpec k175b{"gpt-175b", 96, 12288, 96, 2048, 50304};
// Korthikanti et al. 2022, Table 3: 22B (h 6144, a 64, 48 layers, s 2048) and 175B (h 12288, a 96, 96
// layers); both TP 8, the 22B with micro-batch 4 on one stage, the 175B with micro-batch 1 on 8 stages.
const ModelSpec kK22b{"k-22b", 48, 6144, 64, 2048, 51200};
const ModelSpec kK175b{"k-175b", 96, 12288, 96, 2048, 51200};
constexpr double kMi250xGcdBytes = 64e9;  // HBM per GCD, docs/sources.md 2.1 [F1]

/// Korthikanti's setting: 16-bit, dropout on, attention without flash (the s^2 scores are kept).
TrainingSpec korthikanti(std::int64_t global_batch, Recompute recompute) {
  TrainingSpec t{global_batch, recompute};
  t.attention = AttentionImpl::Standard;
  t.dropout = 0.1;
  t.dtype = exasim::gpu::DType::Bf16;
  return t;
}

}  // namespace

TEST_CASE("175B with TP4 x PP16 x DP2 and ZeRO-1 fits a 64 GB GCD, without pipelining it does not", "[unit]") {
  const TrainingSpec t{640, Recompute::Full};
  auto fits = estimate_megatron_memory(k175b, {4, 16, 2, 1, 1, 1, false}, t);
  INFO("TP4xPP16xDP2: " << fits.total() / 1e9 << " GB (weights " << fits.weights / 1e9 << ", optimizer "
                        << fits.optimizer / 1e9 << ", activations " << fits.activations / 1e9 << ")");
  CHECK(fits.total() < kMi250xGcdBytes);
  auto flat = estimate_megatron_memory(k175b, {4, 1, 32, 1, 1, 1, false}, t);
  INFO("TP4xPP1xDP32: " << flat.total() / 1e9 << " GB");
  CHECK(flat.total() > kMi250xGcdBytes);
  CHECK(flat.weights > kMi250xGcdBytes);  // even the bf16 weights alone: 174B / 4 * 2 B
}

TEST_CASE("Korthikanti's closed forms, per layer: 34 + 5as/h | 10 + 24/t + 5as/(ht) | 34/t + 5as/(ht)", "[unit]") {
  const double s = 2048, h = 6144, a = 64, b = 4, t = 8;
  const double sbh = s * b * h;
  const TrainingSpec none = korthikanti(4, Recompute::None);
  // No parallelism.
  CHECK(layer_activations(kK22b, none, b, {1, 1}).all() == Approx(sbh * (34 + 5 * a * s / h)));
  // Tensor parallelism: the 10sbh outside the column/row-parallel pair stay whole.
  CHECK(layer_activations(kK22b, none, b, {1, t}).all() == Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
  // Tensor + sequence parallelism.
  const LayerActivations sp = layer_activations(kK22b, none, b, {t, t});
  CHECK(sp.all() == Approx(sbh * (34 / t + 5 * a * s / (h * t))));
  // Selective recomputation keeps everything but the 5as/(ht) term, which it holds for one layer.
  CHECK(sp.kept(Recompute::Selective) == Approx(sbh * 34 / t));
  CHECK(sp.working_set(Recompute::Selective) == Approx(sbh * 5 * a * s / (h * t)));
  // Full recomputation keeps the 2sbh input (/t with SP, whole without) and one layer's everything.
  CHECK(sp.kept(Recompute::Full) == Approx(2 * sbh / t));
  CHECK(layer_activations(kK22b, none, b, {1, t}).kept(Recompute::Full) == Approx(2 * sbh));
  CHECK(sp.working_set(Recompute::Full) == Approx(sp.all()));
  CHECK(sp.kept(Recompute::None) == Approx(sp.all()));
  CHECK(sp.working_set(Recompute::None) == 0);
}

TEST_CASE("Korthikanti's Table 3 models through the Megatron estimate: L layers on the first stage", "[unit]") {
  // 22B, TP 8 + SP, one stage, micro-batch 4: all 48 layers of the one micro-batch.
  const double sbh22 = 2048.0 * 4 * 6144;
  const MegatronConfig c22{8, 1, 1, 0, 4, 1, true};
  auto none = estimate_megatron_memory(kK22b, c22, korthikanti(4, Recompute::None));
  CHECK(none.activations == Approx(48 * sbh22 * (34.0 / 8 + 5 * 64 * 2048.0 / (6144 * 8))));
  auto sel = estimate_megatron_memory(kK22b, c22, korthikanti(4, Recompute::Selective));
  CHECK(sel.activations == Approx(48 * sbh22 * 34.0 / 8 + sbh22 * 5 * 64 * 2048.0 / (6144 * 8)));
  auto full = estimate_megatron_memory(kK22b, c22, korthikanti(4, Recompute::Full));
  CHECK(full.activations == Approx(48 * sbh22 * 2 / 8 + sbh22 * (34.0 / 8 + 5 * 64 * 2048.0 / (6144 * 8))));
  // 175B, TP 8 + SP, 8 stages, 1F1B with 64 micro-batches: the first stage holds p = 8 micro-batches of
  // its L/p layers, L layers' worth (their equation 5); the last holds one.
  const double sbh175 = 2048.0 * 1 * 12288;
  const double per_layer = sbh175 * (34.0 / 8 + 5 * 96 * 2048.0 / (12288 * 8));
  const MegatronConfig c175{8, 8, 1, 0, 1, 1, true};
  const TrainingSpec t175 = korthikanti(64, Recompute::None);
  CHECK(estimate_megatron_stage_memory(kK175b, c175, t175, 0).activations == Approx(96 * per_layer));
  CHECK(estimate_megatron_stage_memory(kK175b, c175, t175, 7).activations == Approx(12 * per_layer));
}

TEST_CASE("activation terms follow dropout, dtype, flash, SwiGLU, ffn and GQA", "[unit]") {
  const ModelSpec gpt{"t", 16, 1024, 16, 512, 1024};
  const double s = 512, h = 1024, a = 16, b = 2, t = 4;
  const double sb = s * b, sbh = sb * h;
  const TrainingSpec base = korthikanti(8, Recompute::None);
  const ActivationSplit tp{1, t};
  const double ref = layer_activations(gpt, base, b, tp).all();
  REQUIRE(ref == Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));

  SECTION("dropout 0: no masks (2sbh and as^2b) and no dropout copy of the probabilities (2as^2b)") {
    TrainingSpec d = base;
    d.dropout = 0;
    CHECK(layer_activations(gpt, d, b, tp).all() == Approx(sbh * (8 + 24 / t + 2 * a * s / (h * t))));
  }
  SECTION("fp32: every term doubles but the 1-byte masks") {
    TrainingSpec f = base;
    f.dtype = exasim::gpu::DType::Fp32;
    const double masks = 2 * sbh + a * s * sb / t;
    CHECK(layer_activations(gpt, f, b, tp).all() == Approx(2 * ref - masks));
  }
  SECTION("flash: no s^2 terms, fp32 softmax statistics per row; selective then drops only those") {
    TrainingSpec f = base;
    f.attention = AttentionImpl::Flash;
    const LayerActivations l = layer_activations(gpt, f, b, tp);
    CHECK(l.all() == Approx(sbh * (10 + 24 / t) + 4 * a * sb / t));
    CHECK(l.kept(Recompute::Selective) == Approx(sbh * (10 + 24 / t)));
  }
  SECTION("MLP width and SwiGLU: GeLU keeps 2 ffn-wide tensors, SwiGLU 3") {
    ModelSpec wide = gpt;
    wide.ffn_hidden = 8 * 1024;
    CHECK(layer_activations(wide, base, b, tp).all() - ref == Approx(2 * 2 * sb * 4 * h / t));
    ModelSpec swiglu = wide;
    swiglu.activation = Activation::Swiglu;
    CHECK(layer_activations(swiglu, base, b, tp).all() - layer_activations(wide, base, b, tp).all() ==
          Approx(2 * sb * 8 * h / t));
  }
  SECTION("GQA: K and V at kv width, except the standard core's copies expanded to every head") {
    ModelSpec gqa = gpt;
    gqa.kv_heads = 4;  // kv_hidden = h / 4
    const double saved = 2 * 2 * sb * (h - h / 4) / t;
    TrainingSpec f = base;
    f.attention = AttentionImpl::Flash;
    CHECK(layer_activations(gpt, f, b, tp).all() - layer_activations(gqa, f, b, tp).all() == Approx(saved));
    CHECK(layer_activations(gqa, base, b, tp).all() == Approx(ref));
    CHECK(layer_activations(gpt, base, b, tp).kept(Recompute::Selective) -
              layer_activations(gqa, base, b, tp).kept(Recompute::Selective) ==
          Approx(saved));
  }
}

TEST_CASE("Megatron memory: mixed precision 2 + dp_grad_bytes + 12 B per parameter, sharded over dp by ZeRO",
          "[unit]") {
  const TrainingSpec t{64, Recompute::Full};  // dp_grad_bytes 4: fp32 main-grad buffers
  const MegatronConfig base{4, 4, 8, 0, 1, 1, false};
  auto z0 = estimate_megatron_stage_memory(k175b, base, t, 1);  // a middle stage: layers only
  const double params = 24 * 12.0 * 12288 * 12288 / 4;
  CHECK(z0.weights == Approx(2 * params));
  CHECK(z0.gradients == Approx(4 * params));
  CHECK(z0.optimizer == Approx(12 * params));
  TrainingSpec bf16_grads = t;
  bf16_grads.dp_grad_bytes = 2;
  CHECK(estimate_megatron_stage_memory(k175b, base, bf16_grads, 1).gradients == Approx(2 * params));
  auto with_zero = [&](std::uint32_t zero) {
    MegatronConfig c = base;
    c.zero = zero;
    return estimate_megatron_stage_memory(k175b, c, t, 1);
  };
  auto z1 = with_zero(1), z2 = with_zero(2), z3 = with_zero(3);
  CHECK(z1.optimizer == Approx(z0.optimizer / 8));
  CHECK(z1.gradients == Approx(z0.gradients));
  CHECK(z2.gradients == Approx(z0.gradients / 8));
  CHECK(z2.weights == Approx(z0.weights));
  CHECK(z3.weights == Approx(z0.weights / 8));
  CHECK(z0.total() > z1.total());
  CHECK(z1.total() > z2.total());
  CHECK(z2.total() > z3.total());
}

TEST_CASE("fp32 training: weights 4, gradients 4, Adam m + v 8 (no master copy)", "[unit]") {
  TrainingSpec t{64, Recompute::Full};
  t.dtype = exasim::gpu::DType::Fp32;
  t.dp_grad_bytes = 2;  // a bf16 reduction does not shrink the fp32 param.grad
  auto e = estimate_megatron_stage_memory(k175b, {4, 4, 8, 0, 1, 1, false}, t, 1);
  const double params = 24 * 12.0 * 12288 * 12288 / 4;
  CHECK(e.weights == Approx(4 * params));
  CHECK(e.gradients == Approx(4 * params));
  CHECK(e.optimizer == Approx(8 * params));
}

TEST_CASE("Megatron parameters: layer_params of SwiGLU/GQA shapes, embedding first, LM head last", "[unit]") {
  ModelSpec llama{"l", 8, 1024, 16, 512, 4096};
  llama.ffn_hidden = 2816;
  llama.kv_heads = 4;
  llama.activation = Activation::Swiglu;
  const double layer = 1024.0 * (1024 + 2 * 256) + 1024.0 * 1024 + 3 * 1024.0 * 2816;
  REQUIRE(llama.layer_params() == Approx(layer));
  const TrainingSpec t{8, Recompute::Full};
  const double table = 4096.0 / 2 * 1024;  // vocabulary-parallel over tp = 2
  auto param_count = [&](const ModelSpec& m, const MegatronConfig& c, std::uint32_t stage) {
    return estimate_megatron_stage_memory(m, c, t, stage).weights / 2;
  };
  const MegatronConfig pipe{2, 2, 1, 0, 1, 1, false};
  // Tied: the first stage holds the embedding, the last a copy of it.
  CHECK(param_count(llama, pipe, 0) == Approx(4 * layer / 2 + table));
  CHECK(param_count(llama, pipe, 1) == Approx(4 * layer / 2 + table));
  ModelSpec untied = llama;
  untied.tied_embeddings = false;
  CHECK(param_count(untied, pipe, 1) == Approx(4 * layer / 2 + table));
  // One stage: tied is one matrix, untied two.
  const MegatronConfig flat{2, 1, 1, 0, 1, 1, false};
  CHECK(param_count(llama, flat, 0) == Approx(8 * layer / 2 + table));
  CHECK(param_count(untied, flat, 0) == Approx(8 * layer / 2 + 2 * table));
}

TEST_CASE("activations on a pipeline: Korthikanti's per-layer terms times the micro-batches in flight", "[unit]") {
  const ModelSpec m{"t", 16, 1024, 16, 512, 1024};
  const TrainingSpec t = korthikanti(8, Recompute::None);
  const double per_layer = layer_activations(m, t, 1, {1, 1}).all();
  // 1F1B, 4 stages: the first stage keeps min(m, p) micro-batches of its L/p layers = L layers' worth.
  auto pipe = estimate_megatron_stage_memory(m, {1, 4, 1, 0, 1, 1, false}, t, 0);
  CHECK(pipe.activations == Approx(4 * 4 * per_layer));
  auto last = estimate_megatron_stage_memory(m, {1, 4, 1, 0, 1, 1, false}, t, 3);
  CHECK(last.activations == Approx(1 * 4 * per_layer));
  // Interleaving with v chunks: L * (1 + (p-1)/(p v)) layers on the first stage.
  auto inter = estimate_megatron_stage_memory(m, {1, 4, 1, 0, 1, 2, false}, t, 0);
  CHECK(inter.activations == Approx(16 * (1 + 3.0 / 8) * per_layer));
}

TEST_CASE("the last stage's logits: an fp32 and a math-type copy at the cross-entropy's peak", "[unit]") {
  const ModelSpec m{"t", 8, 1024, 16, 512, 32000};
  const MegatronConfig c{2, 2, 1, 0, 2, 1, false};
  TrainingSpec bf16{8, Recompute::Full};
  TrainingSpec fp32 = bf16;
  fp32.dtype = exasim::gpu::DType::Fp32;
  const double tokens = 2.0 * 512, local_vocab = 32000 / 2;
  // bf16: the fp32 upcast (4 B) beside the bf16 logits (2 B); fp32: the upcast is the same tensor.
  CHECK(estimate_megatron_stage_memory(m, c, bf16, 1).logits == Approx(6 * tokens * local_vocab));
  CHECK(estimate_megatron_stage_memory(m, c, fp32, 1).logits == Approx(4 * tokens * local_vocab));
  // The first stage has no LM head.
  CHECK(estimate_megatron_stage_memory(m, c, bf16, 0).logits == 0);
}

TEST_CASE("workspace: ZeRO 0/1 reduce in place, ZeRO 2 adds a bucket, ZeRO 3 two gathered layers", "[unit]") {
  const TrainingSpec t{64, Recompute::Full};
  auto with_zero = [&](std::uint32_t zero) {
    return estimate_megatron_stage_memory(k175b, {4, 4, 8, zero, 1, 1, false}, t, 1);  // a middle stage
  };
  const double layer = 12.0 * 12288 * 12288 / 4;  // one layer's parameters over tp = 4
  CHECK(with_zero(0).buffers == 0);
  CHECK(with_zero(1).buffers == 0);
  // DeepSpeed's bucket: min(reduce_bucket_size 5e8, a layer = 4.5e8) elements of 4 B.
  CHECK(with_zero(2).buffers == Approx(4 * layer));
  CHECK(with_zero(3).buffers == Approx(4 * layer + 2 * 2 * layer));
  // No logits on a middle stage; the workspace is the sum of its parts.
  const MemoryEstimate z3 = with_zero(3);
  CHECK(z3.logits == 0);
  CHECK(z3.workspace == Approx(z3.logits + z3.buffers + z3.runtime));
}

TEST_CASE("runtime: CUDA context plus 32 ring channels of NCCL buffers per communicating group", "[unit]") {
  // Per channel: Simple 4 MiB + LL128 120 x 640 x 8 x 8 B + LL 8 x 512 x 8 x 16 B = 9,633,792 B.
  const double group = 32 * (4194304.0 + 4915200.0 + 524288.0);
  const double context = 0.5e9;
  const TrainingSpec t{64, Recompute::Full};
  ModelSpec untied = k175b;
  untied.tied_embeddings = false;
  // TP 4 and DP 8 communicate; a middle stage is not in the embedding group.
  CHECK(estimate_megatron_stage_memory(k175b, {4, 4, 8, 1, 1, 1, false}, t, 1).runtime == Approx(context + 2 * group));
  // The first stage of a tied model is in the embedding group too; untied, it never communicates.
  CHECK(estimate_megatron_stage_memory(k175b, {4, 4, 8, 1, 1, 1, false}, t, 0).runtime == Approx(context + 3 * group));
  CHECK(estimate_megatron_stage_memory(untied, {4, 4, 8, 1, 1, 1, false}, t, 0).runtime == Approx(context + 2 * group));
  // One GPU per group: nothing but the context.
  CHECK(estimate_megatron_stage_memory(k175b, {1, 1, 1, 0, 1, 1, false}, TrainingSpec{1, Recompute::Full}, 0).runtime ==
        Approx(context));
}

TEST_CASE("Megatron's distributed optimizer figures: 6 + 12/d and 4 + 16/d bytes per parameter", "[unit]") {
  // Megatron-LM's docs/source/api-guide/dist_optimizer.md: bf16 param + fp32 grads 6 + 12/d; 16-bit param +
  // 16-bit grads 4 + 16/d (the optimizer steps on an fp32 copy of its gradient shard); fp32 8 + 8/d.
  const MegatronConfig zero1{4, 4, 8, 1, 1, 1, false};
  const double params = 24 * 12.0 * 12288 * 12288 / 4;  // a middle stage's layers over tp = 4
  auto state = [&](const TrainingSpec& t) {
    const MemoryEstimate e = estimate_megatron_stage_memory(k175b, zero1, t, 1);
    return (e.weights + e.gradients + e.optimizer) / params;
  };
  TrainingSpec fp32_grads{64, Recompute::Full};
  CHECK(state(fp32_grads) == Approx(6 + 12.0 / 8));
  TrainingSpec bf16_grads = fp32_grads;
  bf16_grads.dp_grad_bytes = 2;
  CHECK(state(bf16_grads) == Approx(4 + 16.0 / 8));
  TrainingSpec fp32 = fp32_grads;
  fp32.dtype = exasim::gpu::DType::Fp32;
  CHECK(state(fp32) == Approx(8 + 8.0 / 8));
  // Without sharding, the guide's non-distributed column: 18 and 20.
  const MegatronConfig zero0{4, 4, 8, 0, 1, 1, false};
  const MemoryEstimate e = estimate_megatron_stage_memory(k175b, zero0, bf16_grads, 1);
  CHECK((e.weights + e.gradients + e.optimizer) / params == Approx(20));
}

TEST_CASE("memory_verdict: the largest term, the overflow and the terms larger than it", "[unit]") {
  MemoryEstimate e;
  e.weights = 7e9;
  e.gradients = 14e9;
  e.optimizer = 1e9;
  e.activations = 100e9;
  e.workspace = 3e9;  // total 125e9
  const MemoryVerdict over = memory_verdict(e, 80e9);
  CHECK(over.largest == "activations");
  CHECK(over.largest_bytes == 100e9);
  CHECK(over.over_bytes == Approx(45e9));
  CHECK(over.over_terms == std::vector<std::string>{"activations"});
  // 6 GB over: gradients and activations each exceed it, weights (7) too; in the breakdown's order.
  const MemoryVerdict near = memory_verdict(e, 119e9);
  CHECK(near.over_terms == std::vector<std::string>{"weights", "gradients", "activations"});
  // Over by more than any term: none alone.
  CHECK(memory_verdict(e, 20e9).over_terms.empty());
  const MemoryVerdict fits = memory_verdict(e, 200e9);
  CHECK(fits.over_bytes == 0);
  CHECK(fits.over_terms.empty());
  CHECK(fits.largest == "activations");
}

TEST_CASE("AxoNN 4D memory: weights over x*y*z, embedding over x*y, activations split outer gx, inner gy", "[unit]") {
  const ModelSpec m{"t", 16, 1024, 16, 512, 1024};
  const Axonn4DConfig g{2, 4, 2, 4};
  const TrainingSpec none = korthikanti(32, Recompute::None);
  auto e = estimate_axonn4d_memory(m, g, none);
  const double params = 16 * 12.0 * 1024 * 1024 / 16 + 1024.0 * 1024 / 8;
  CHECK(e.weights == Approx(2 * params));
  CHECK(e.gradients == Approx(4 * params));
  CHECK(e.optimizer == Approx(12 * params));
  const double b = 32.0 / (4 * 2), sbh = b * 512 * 1024;
  CHECK(e.activations == Approx(16 * sbh * (10.0 / 2 + 24.0 / 4 + 5 * 16 * 512.0 / (1024 * 4))));
  // Runtime: the 0.5 GB context and four communicating groups (x, y, z, data) of NCCL ring buffers.
  CHECK(e.runtime == Approx(0.5e9 + 4 * 32 * 9633792.0));
  auto rc = estimate_axonn4d_memory(m, g, korthikanti(32, Recompute::Full));
  CHECK(rc.activations == Approx(16 * 2 * sbh / 2 + sbh * (10.0 / 2 + 24.0 / 4 + 5 * 16 * 512.0 / (1024 * 4))));
  ModelSpec untied = m;
  untied.tied_embeddings = false;
  CHECK(estimate_axonn4d_memory(untied, g, none).weights == Approx(2 * (params + 1024.0 * 1024 / 8)));
}

namespace {

constexpr double kH100Bytes = 80e9;  // H100 SXM 80 GB, the capacity exasim checks against (sim/gpu/devices.cpp)

/// validate/published/scenarios/llama3-405b-*.json: Llama 3 405B with 128 layers (PP16 divides them).
ModelSpec llama3_405b_128() {
  ModelSpec m{"llama3-405b-128-layers", 128, 16384, 128, 8192, 128256};
  m.kv_heads = 8;
  m.ffn_hidden = 53248;
  m.activation = Activation::Swiglu;
  m.tied_embeddings = false;
  return m;
}

/// The Llama 3 paper's training (arXiv 2407.21783 section 3.3.2, Table 4): bf16, fp32 gradient reduction,
/// no activation checkpointing at 8K sequences; flash attention and no dropout as the scenarios.
TrainingSpec llama3_training() {
  TrainingSpec t{2048, Recompute::None};
  t.attention = AttentionImpl::Flash;
  t.dropout = 0;
  t.dp_grad_bytes = 4;
  return t;
}

}  // namespace

TEST_CASE("Llama 3 405B, one layer at TP 8 with SP, sequence 8192: 533,200,896 bytes kept", "[unit]") {
  // e = 2, s*b = 8192, h = 16384, kvh = 8 * 128 = 1024, ffn = 53248, t = 8, no dropout, flash:
  //   outer (norm inputs 2e + QKV and MLP inputs 2e) sbh / t          = 8 * 8192 * 16384 / 8 = 134,217,728
  //   inner (Q e h + K, V 2e kvh + projection input e h) sb / t        = 8192 * 69,632 / 8     =  71,303,168
  //         SwiGLU 3e sb ffn / t                                       = 6 * 8192 * 53248 / 8  = 327,155,712
  //   core  log-sum-exp 4 a sb / t                                     = 4 * 128 * 8192 / 8    =     524,288
  const LayerActivations l = layer_activations(llama3_405b_128(), llama3_training(), 1, {8, 8});
  CHECK(l.all() == Approx(533200896.0));
}

TEST_CASE("Llama 3 405B on H100 80 GB with the paper's TP8 x PP16, fp32 gradients, no recomputation", "[unit]") {
  const ModelSpec m = llama3_405b_128();
  const TrainingSpec t = llama3_training();
  const double layer = 533200896.0;
  // First stage: 8 layers of 3,187,671,040 / 8 parameters and the embedding's 16,032 x 16,384 rows.
  const double first_params = 3187671040.0 + 16032.0 * 16384;

  SECTION("16,384 GPUs, DP 128: m = p = 16, so the first stage holds all 32 chunk-micro-batches, 128 layers") {
    // Gradients sharded over DP as the paper's FSDP shards them (ZeRO 2), its interleaving estimated as 2.
    const MegatronConfig fsdp{8, 16, 128, 2, 1, 2, true};
    const MemoryEstimate e = estimate_megatron_memory(m, fsdp, t);
    CHECK(e.activations == Approx(128 * layer));
    CHECK(e.weights == Approx(2 * first_params));
    CHECK(e.gradients == Approx(4 * first_params / 128));
    CHECK(e.total() < kH100Bytes);
    CHECK(memory_verdict(e, kH100Bytes).largest == "activations");
    // The scenario's ZeRO-1 keeps a whole fp32 gradient buffer (13.8 GB) and does not fit.
    const MemoryEstimate zero1 = estimate_megatron_memory(m, {8, 16, 128, 1, 1, 2, true}, t);
    CHECK(zero1.gradients == Approx(4 * first_params));
    CHECK(zero1.total() > kH100Bytes);
  }
  SECTION("8,192 GPUs, DP 64: 32 micro-batches; 1F1B keeps p of them on the first stage, 128 layers") {
    const MemoryEstimate plain = estimate_megatron_memory(m, {8, 16, 64, 2, 1, 1, true}, t);
    CHECK(plain.activations == Approx(128 * layer));
    CHECK(plain.total() < kH100Bytes);
    // Megatron's interleaved schedule with v = 2 holds 2*15 + 16 + 1 = 47 chunk-micro-batches of 4 layers,
    // L(1 + (p-1)/(pv)) = 188 layers: the activations alone exceed the GPU.
    const MemoryEstimate interleaved = estimate_megatron_memory(m, {8, 16, 64, 2, 1, 2, true}, t);
    CHECK(interleaved.activations == Approx(188 * layer));
    CHECK(interleaved.activations > kH100Bytes);
  }
}

TEST_CASE("Nemotron-4 15B on 16 H100, TP 2 with SP, DP 8, distributed optimizer: fits either gradient dtype",
          "[unit]") {
  // configs/models/nemotron4-15b.json; configs/scenarios/nemotron4-15b-16.json.
  ModelSpec m{"nemotron4-15b", 32, 6144, 48, 4096, 256000};
  m.kv_heads = 8;
  m.ffn_hidden = 24576;
  m.tied_embeddings = false;
  TrainingSpec t{64, Recompute::None};
  t.dropout = 0;
  const MegatronConfig c{2, 1, 8, 1, 1, 1, true};
  // Per GPU: 32 layers of 390,070,272 / 2 parameters, the embedding and the LM head of 128,000 x 6144 each.
  const double params = 32 * 390070272.0 / 2 + 2 * 128000.0 * 6144;
  const MemoryEstimate fp32 = estimate_megatron_memory(m, c, t);
  CHECK(fp32.weights + fp32.gradients + fp32.optimizer == Approx(params * (6 + 12.0 / 8)));  // 58.6 GB
  CHECK(fp32.logits == Approx(6 * 4096.0 * 128000));                                         // 3.1 GB
  CHECK(fp32.total() < kH100Bytes);
  TrainingSpec bf16 = t;
  bf16.dp_grad_bytes = 2;
  const MemoryEstimate half = estimate_megatron_memory(m, c, bf16);
  CHECK(half.weights + half.gradients + half.optimizer == Approx(params * (4 + 16.0 / 8)));  // 46.9 GB
  CHECK(memory_verdict(fp32, kH100Bytes).largest == "gradients");
}

TEST_CASE("Nemotron-4 340B on 128 H100, TP 8 x PP 8 x DP 2: fits with full recomputation, not without", "[unit]") {
  // configs/models/nemotron4-340b.json; configs/scenarios/nemotron4-340b-128.json.
  ModelSpec m{"nemotron4-340b", 96, 18432, 96, 4096, 256000};
  m.kv_heads = 8;
  m.ffn_hidden = 73728;
  m.tied_embeddings = false;
  TrainingSpec t{32, Recompute::Full};
  t.dropout = 0;
  const MegatronConfig c{8, 8, 2, 1, 1, 1, true};
  // First stage: 12 layers of 3,454,009,344 / 8 parameters and 32,000 x 18,432 embedding rows, at
  // 6 + 12/2 B: 69.25 GB of state.
  const double first_params = 12 * 3454009344.0 / 8 + 32000.0 * 18432;
  const MemoryEstimate full = estimate_megatron_memory(m, c, t);
  CHECK(full.weights + full.gradients + full.optimizer == Approx(12 * first_params));
  CHECK(full.total() < kH100Bytes);
  // No recomputation: 1F1B keeps 8 micro-batches of 12 layers, 96 x 267,583,488 B = 25.7 GB more.
  TrainingSpec none = t;
  none.recompute = Recompute::None;
  const MemoryEstimate kept = estimate_megatron_stage_memory(m, c, none, 0);
  CHECK(kept.activations == Approx(96 * 267583488.0));
  CHECK(kept.total() > kH100Bytes);
}

TEST_CASE("fp8: 2 B more per layer weight, 1 B less per element of each linear layer's saved input", "[unit]") {
  // GPT-175B on a middle stage of TP 4 (SP) x PP 4 x DP 8, nothing recomputed, flash, no dropout: the
  // terms fp8 changes, by hand from memory.hpp's per-layer count.
  TrainingSpec bf16{64, Recompute::None};
  bf16.dropout = 0;
  TrainingSpec fp8 = bf16;
  fp8.dtype = exasim::gpu::DType::Fp8;
  const MegatronConfig c{4, 4, 8, 1, 1, 1, true};
  const auto a = estimate_megatron_stage_memory(k175b, c, bf16, 1);
  const auto b = estimate_megatron_stage_memory(k175b, c, fp8, 1);
  // Weights: the stage's 24 layers of 12 h^2 / tp parameters, each with an fp8 copy and its transpose.
  const double h = 12288, s = 2048, tp = 4, stage_params = 24 * 12 * h * h / tp;
  CHECK(b.weights - a.weights == Approx(2 * stage_params));
  CHECK(b.gradients == a.gradients);
  CHECK(b.optimizer == a.optimizer);
  // Activations: per layer and micro-batch (b = 1), the QKV and MLP-up inputs (s h / tp each with SP), the
  // projection input (s h / tp) and the MLP-down input (s 4h / tp) drop from 2 B to 1 B. The stage keeps
  // min(m, p - s) = 3 micro-batches of its 24 layers.
  const double per_layer = (2 * s * h + s * h + s * 4 * h) / tp;
  CHECK(a.activations - b.activations == Approx(3 * 24 * per_layer));
  CHECK(b.workspace == a.workspace);
}
