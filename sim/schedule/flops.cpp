#include "sim/schedule/flops.hpp"

namespace exasim::schedule {

double megatron_flops(const ModelSpec& m, std::int64_t global_batch, double coefficient) {
  const auto B = static_cast<double>(global_batch), S = static_cast<double>(m.seq_len),
             L = static_cast<double>(m.layers), H = static_cast<double>(m.hidden), V = static_cast<double>(m.vocab);
  const double c = coefficient;
  return c / 12 * B * S * L * m.layer_params() + c / 6 * B * S * S * L * H + c / 16 * B * S * H * V;
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
