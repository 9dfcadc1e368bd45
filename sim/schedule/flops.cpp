#include "sim/schedule/flops.hpp"

namespace exasim::schedule {

double megatron_flops(const ModelSpec& m, std::int64_t global_batch, double coefficient) {
  auto B = static_cast<double>(global_batch), S = static_cast<double>(m.seq_len), L = static_cast<double>(m.layers),
       H = static_cast<double>(m.hidden), V = static_cast<double>(m.vocab);
  return coefficient * B * S * L * H * H * (1 + S / (6 * H) + V / (16 * L * H));
}

}  // namespace exasim::schedule
