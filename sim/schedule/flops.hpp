#pragma once
// FLOPs per iteration as Megatron counts them (Narayanan et al., SC21, eq. 3), which is also how AxoNN
// and the Frontier study report TFLOP/s:
//   F = c * 24 * B * S * L * H^2 * (1 + S/(6H) + V/(16*L*H)),
// c = 3 counts forward + backward (model flops); c = 4 adds the recomputed forward (hardware flops with
// full recomputation), i.e. 72 and 96 as coefficients.

#include "sim/schedule/model.hpp"

namespace exasim::schedule {

[[nodiscard]] double megatron_flops(const ModelSpec& model, std::int64_t global_batch, double coefficient);
[[nodiscard]] inline double model_flops(const ModelSpec& m, std::int64_t global_batch) {
  return megatron_flops(m, global_batch, 72);
}
[[nodiscard]] inline double hardware_flops(const ModelSpec& m, std::int64_t global_batch, bool recompute) {
  return megatron_flops(m, global_batch, recompute ? 96 : 72);
}

}  // namespace exasim::schedule
