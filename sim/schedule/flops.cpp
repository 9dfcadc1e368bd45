#include "sim/schedule/flops.hpp"

namespace exasim::schedule {

double megatron_flops(const ModelSpec& m, std::int64_t global_batch, double coefficient) {
  const auto B = static_cast<double>(global_batch), S = static_cast<double>(m.seq_len),
             L = static_cast<double>(m.layers), H = static_cast<double>(m.hidden), V = static_cast<double>(m.vocab);
  const double c = coefficient;
  // A dense model's matrices in Megatron's own order of products; a MoE model's active ones (its experts'
  // top_k share, the router and shared experts: ModelSpec::active_layer_params).
  const double matrices =
      m.moe.enabled() ? c / 12 * B * S * m.active_layer_params() : c / 12 * B * S * L * m.layer_params();
  return matrices + c / 6 * B * S * S * L * H + c / 16 * B * S * H * V;
}

double hardware_flops(const ModelSpec& m, std::int64_t global_batch, Recompute recompute) {
  switch (recompute) {
    case Recompute::Full: return megatron_flops(m, global_batch, 96);
    case Recompute::Selective: {
      const auto B = static_cast<double>(global_batch), S = static_cast<double>(m.seq_len),
                 L = static_cast<double>(m.layers), H = static_cast<double>(m.hidden);
      return megatron_flops(m, global_batch, 72) + 4 * B * S * S * L * H;
    }
    case Recompute::None: break;
  }
  return megatron_flops(m, global_batch, 72);
}

}  // namespace exasim::schedule
