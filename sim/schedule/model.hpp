#pragma once
// The shape of a GPT-style decoder-only transformer, as the plans, the memory model and the FLOP
// formulas need it: classic GPT (4h GeLU MLP, multi-head attention, tied embedding) by default, and
// the Llama family's variations (SwiGLU MLP of any width, grouped-query attention, untied output layer).
//
// LIMITATIONS: biases, norm weights and position embeddings are not counted as parameters (they are
// < 0.1% of a large model); no mixture of experts, no multi-query latent attention, no parallel
// attention + MLP blocks (GPT-J / PaLM style).

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
  /// layers * layer_params + embedding_params: transformer weights plus the embedding (and untied head).
  [[nodiscard]] double parameters() const;
};

/// Reads a model object; every field must be a positive integer, heads must divide hidden and kv_heads
/// must divide heads. Optional: ffn_hidden (default 4 * hidden), kv_heads (default heads), activation
/// ("gelu" default, "swiglu"), tied_embeddings (default true).
[[nodiscard]] ModelSpec load_model_spec(const JsonView& view);

}  // namespace exasim::schedule
