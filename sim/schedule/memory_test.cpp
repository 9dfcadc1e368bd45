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

TEST_CASE("the last stage's logits: fp32 in the loss plus their gradient in the math type", "[unit]") {
  const ModelSpec m{"t", 8, 1024, 16, 512, 32000};
  const MegatronConfig c{2, 2, 1, 0, 2, 1, false};
  TrainingSpec bf16{8, Recompute::Full};
  TrainingSpec fp32 = bf16;
  fp32.dtype = exasim::gpu::DType::Fp32;
  fp32.dp_grad_bytes = 4;
  auto lo = estimate_megatron_stage_memory(m, c, bf16, 1), hi = estimate_megatron_stage_memory(m, c, fp32, 1);
  // workspace = transient + reserve + 10% (resident + transient): take the resident part out.
  const double resident = (hi.weights + hi.gradients + hi.optimizer + hi.activations) -
                          (lo.weights + lo.gradients + lo.optimizer + lo.activations);
  const double logits_delta = (hi.workspace - lo.workspace - 0.1 * resident) / 1.1;
  const double tokens = 2.0 * 512, local_vocab = 16000;
  CHECK(logits_delta == Approx((8 - 6) * tokens * local_vocab));
  // The first stage has no LM head: its workspace does not see the vocabulary.
  ModelSpec big_vocab = m;
  big_vocab.vocab = 64000;
  auto first = estimate_megatron_stage_memory(m, c, bf16, 0),
       first_big = estimate_megatron_stage_memory(big_vocab, c, bf16, 0);
  const double resident_first = (first_big.weights - first.weights) + (first_big.gradients - first.gradients) +
                                (first_big.optimizer - first.optimizer);
  CHECK(first_big.workspace - first.workspace == Approx(0.1 * resident_first));
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
  CHECK(e.workspace > 1e9);  // the fixed runtime reserve at least
  auto rc = estimate_axonn4d_memory(m, g, korthikanti(32, Recompute::Full));
  CHECK(rc.activations == Approx(16 * 2 * sbh / 2 + sbh * (10.0 / 2 + 24.0 / 4 + 5 * 16 * 512.0 / (1024 * 4))));
  ModelSpec untied = m;
  untied.tied_embeddings = false;
  CHECK(estimate_axonn4d_memory(untied, g, none).weights == Approx(2 * (params + 1024.0 * 1024 / 8)));
}
