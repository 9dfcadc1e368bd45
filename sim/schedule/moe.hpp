#pragma once
// Mixture of experts (MoE): which layers route their tokens to experts, and how the routed tokens spread
// over the experts and over the expert-parallel ranks that hold them. Scheme-independent: the Megatron
// plan (megatron_moe.hpp), the memory model and the flop count read it.
//
// A MoE layer, as Megatron-Core's MoELayer runs Mixtral, DBRX and DeepSeek-V3, replaces the dense MLP by
//  - a router: a linear layer hidden -> experts, then softmax and top-k;
//  - `experts` expert MLPs of width expert_ffn_hidden each, with the model's activation (GeLU: two
//    matrices, SwiGLU: three); each token goes through top_k of them;
//  - `shared_experts` MLPs of width expert_ffn_hidden each that every token goes through (DeepSeek's shared
//    experts): they run as one dense MLP of width shared_experts x expert_ffn_hidden.
// Layer i (0-based) is a MoE layer when i >= first_dense_layers and i % moe_layer_freq == 0 (Megatron's
// moe_layer_freq = N; DeepSeek's first_k_dense_replace); the other layers keep the dense MLP of width
// ffn_hidden.
//
// Load imbalance, expert_skew = s >= 0: expert e (0-based) receives a share
//     f_e = (e + 1)^-s / sum_j (j + 1)^-s
// of the routed token copies (a Zipf law; s = 0 is uniform routing, the balance an auxiliary loss aims at;
// s = 1 gives 8 experts a max/mean load of 2.94). Experts sit on expert-parallel ranks in order, rank r
// holding experts r E/ep .. (r + 1) E/ep - 1 (Megatron's layout), so the hottest experts share rank 0:
// the worst case for a given s. Every source rank routes with the same shares, the expectation: no
// sampling noise, deterministic.
//
// Capacity, capacity_factor = cf (optional): an expert accepts at most C = cf x n k / E of the n k token
// copies of a source rank's n tokens (Megatron's get_capacity, without its rounding up to whole tokens);
// the copies beyond are dropped before the dispatch (Megatron's token dropping without padding to the
// capacity): neither sent nor computed. Absent: dropless (Megatron-Core's default).
//
// LIMITATIONS: token counts are expectations (fractions of tokens), rounded to whole rows only where a
// GEMM needs a shape; the skew is one fixed Zipf law for every layer, source rank and micro-batch (real
// routers drift over training and differ per layer); dropped copies are not padded (Megatron's
// moe_pad_expert_input_to_capacity is not modelled); no expert-choice or aux-loss-free routing, no
// device-limited routing (DeepSeek-V3 sends a token to at most 4 nodes: node-limited, not modelled).

#include <cstdint>
#include <optional>
#include <vector>

namespace exasim {
class JsonView;
}

namespace exasim::schedule {

struct MoeSpec {
  std::int64_t experts = 0;  ///< routed experts; 0: a dense model (no other field applies)
  std::int64_t top_k = 0;
  std::int64_t expert_ffn = 0;  ///< one expert's MLP width (model.expert_ffn_hidden)
  std::int64_t shared_experts = 0;
  std::int64_t layer_freq = 1;          ///< model.moe_layer_freq
  std::int64_t first_dense_layers = 0;  ///< model.first_dense_layers
  std::optional<double> capacity_factor{};
  double skew = 0;  ///< model.expert_skew: the Zipf exponent s

  [[nodiscard]] bool enabled() const { return experts > 0; }
  [[nodiscard]] bool is_moe_layer(std::int64_t layer) const {
    return enabled() && layer >= first_dense_layers && layer % layer_freq == 0;
  }
  /// Width of the shared experts run as one MLP: shared_experts x expert_ffn.
  [[nodiscard]] std::int64_t shared_ffn() const { return shared_experts * expert_ffn; }
};

/// Reads the MoE keys of a model object: experts (absent: dense, and then no other MoE key may be given),
/// top_k (1..experts), expert_ffn_hidden (default `ffn_hidden`), shared_experts (default 0),
/// moe_layer_freq (1..layers, default 1), first_dense_layers (0..layers-1, default 0), capacity_factor
/// (> 0, absent: dropless), expert_skew (0..8, default 0). InputError naming the field otherwise.
[[nodiscard]] MoeSpec load_moe_spec(const JsonView& model, std::int64_t layers, std::int64_t ffn_hidden);

/// f_e of the header: each expert's share of the routed copies before capacity (sums to 1).
[[nodiscard]] std::vector<double> expert_popularity(std::int64_t experts, double skew);

/// Where one source rank's n k routed copies go, as fractions of n k (the same for every source rank).
struct ExpertRouting {
  std::vector<double> expert_share;  ///< per expert, after capacity: min(f_e, cf / E)
  std::vector<double> rank_share;    ///< per expert-parallel rank: the sum over the experts it holds
  /// The fraction of copies that are kept (1 without capacity or when no expert overflows).
  [[nodiscard]] double kept() const;
  /// Whether the ranks receive different shares (then their streams differ).
  [[nodiscard]] bool balanced() const;
  /// The busiest rank's share over the mean rank share.
  [[nodiscard]] double max_over_mean() const;
};

/// The routing of `moe` over `ep` expert-parallel ranks (ep divides experts).
[[nodiscard]] ExpertRouting route_experts(const MoeSpec& moe, std::uint32_t ep);

}  // namespace exasim::schedule
