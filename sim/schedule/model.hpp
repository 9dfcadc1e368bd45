#pragma once
// The shape of a GPT-style decoder-only transformer, as the plans, the memory model and the FLOP
// formulas need it: classic GPT (4h GeLU MLP, multi-head attention, tied embedding) by default, and
// the Llama family's variations (SwiGLU MLP of any width, grouped-query attention, untied output layer),
// and mixtures of experts (moe.hpp: which layers, how many experts, how wide).
//
// LIMITATIONS: biases, norm weights and position embeddings are not counted as parameters (they are
// < 0.1% of a large model); no multi-head latent attention (DeepSeek's MLA: a preset approximates it by
// multi-head attention of stated dimensions), no parallel attention + MLP blocks (GPT-J / PaLM style).

#include "sim/schedule/moe.hpp"

#include <cstdint>
#include <string>

namespace exasim {
class JsonView;
}

namespace exasim::schedule {

enum class Activation : std::uint8_t {
  Gelu,    ///< MLP = down(gelu(up(x))): two matrices h x ffn
  Swiglu,  ///< MLP = down(silu(gate(x)) * up(x)): three matrices h x ffn (Llama)
};

struct ModelSpec {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t seq_len = 0;
  std::int64_t vocab = 0;
  std::int64_t ffn_hidden = 0;  ///< MLP inner width; 0 means 4 * hidden (use ffn())
  std::int64_t kv_heads = 0;    ///< key/value heads (grouped-query attention); 0 means heads (use kv())
  Activation activation = Activation::Gelu;
  bool tied_embeddings = true;  ///< the LM head reuses the input embedding (GPT); false: a separate V x h matrix
  MoeSpec moe{};                ///< experts; experts = 0 (the default) for a dense model

  /// MLP inner width: ffn_hidden, or 4 * hidden when unset.
  [[nodiscard]] std::int64_t ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  /// Key/value heads: kv_heads, or heads when unset (multi-head attention).
  [[nodiscard]] std::int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
  [[nodiscard]] std::int64_t head_dim() const { return hidden / heads; }
  /// Width of the K (and of the V) projection: kv * head_dim (= hidden without GQA).
  [[nodiscard]] std::int64_t kv_hidden() const { return kv() * head_dim(); }
  /// Output width of the fused QKV projection: hidden + 2 * kv_hidden.
  [[nodiscard]] std::int64_t qkv_out() const { return hidden + 2 * kv_hidden(); }
  /// Output width of the MLP's first (fused) projection: ffn (GeLU) or 2 * ffn (SwiGLU's gate and up).
  [[nodiscard]] std::int64_t mlp_up_out() const { return activation == Activation::Swiglu ? 2 * ffn() : ffn(); }
  /// Weights of one layer's matrices: QKV (h x qkv_out), attention output (h x h), MLP (up and down):
  /// 12 h^2 for classic GPT.
  [[nodiscard]] double layer_params() const;
  /// Embedding rows (and the LM head's when untied).
  [[nodiscard]] double embedding_params() const;
  /// Every layer's weights plus embedding_params: the transformer plus the embedding (and untied head);
  /// layers * layer_params + embedding_params for a dense model, every expert counted for a MoE one.
  [[nodiscard]] double parameters() const;

  // Mixture of experts (moe.hpp). A dense layer's weights are layer_params(); a MoE layer's are its
  // dense part (attention, router, shared experts) plus its experts.
  /// QKV (h x qkv_out) and attention output (h x h).
  [[nodiscard]] double attention_params() const;
  /// One MLP of inner width `width`: up (h x width, or h x 2 width for SwiGLU) and down (width x h).
  [[nodiscard]] double mlp_params(std::int64_t width) const;
  /// A MoE layer's weights outside its routed experts: attention, router (h x experts), shared experts.
  [[nodiscard]] double moe_dense_params() const;
  /// One routed expert: mlp_params(expert_ffn).
  [[nodiscard]] double expert_params() const { return mlp_params(moe.expert_ffn); }
  /// Layer `layer`'s weights outside its routed experts: layer_params() for a dense layer.
  [[nodiscard]] double layer_dense_params(std::int64_t layer) const;
  /// Layer `layer`'s routed experts: experts x expert_params() for a MoE layer, 0 for a dense one.
  [[nodiscard]] double layer_expert_params(std::int64_t layer) const;
  /// The weights one token's forward multiplies by, summed over the layers (2 flops each): layers *
  /// layer_params for a dense model; a MoE layer counts its dense part and top_k experts only.
  [[nodiscard]] double active_layer_params() const;
  /// active_layer_params + embedding_params: the parameters a token uses.
  [[nodiscard]] double active_parameters() const;
};

/// Reads a model object; every field must be a positive integer, heads must divide hidden and kv_heads
/// must divide heads. Optional: ffn_hidden (default 4 * hidden), kv_heads (default heads), activation
/// ("gelu" default, "swiglu"), tied_embeddings (default true), and the MoE keys (load_moe_spec).
[[nodiscard]] ModelSpec load_model_spec(const JsonView& view);

}  // namespace exasim::schedule
