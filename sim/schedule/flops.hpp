#pragma once
// FLOPs per iteration as Megatron counts them (Narayanan et al., SC21, eq. 3), which is also how AxoNN
// and the Frontier study report TFLOP/s:
//   F = c * 24 * B * S * L * H^2 * (1 + S/(6H) + V/(16*L*H)),
// c = 3 counts forward + backward (model flops); c = 4 adds the recomputed forward (hardware flops with
// full recomputation), i.e. 72 and 96 as coefficients.

//
// For other shapes (an MLP that is not 4h wide, SwiGLU's three matrices, grouped-query attention) the same
// count is written per term, with P = ModelSpec::layer_params() (12 H^2 for classic GPT):
//   F = c/12 * B*S*L*P  +  c/6 * B*S^2*L*H  +  c/16 * B*S*H*V
// (matrices, attention scores and scores x V, LM head), which is Megatron's formula exactly when P = 12 H^2.
// A mixture of experts counts the weights a token is multiplied by: L*P becomes
// ModelSpec::active_layer_params(), each MoE layer's attention, shared experts and top_k of its experts
// (Megatron-LM's num_floating_point_operations for MoE) plus its router, h x experts (which Megatron's
// count leaves out; under 0.01 % of Mixtral's active weights); the idle experts are not model flops. Copies dropped by
// a capacity factor are still counted, as in Megatron's count, which does not see the router's decisions. Selective
// recomputation (Korthikanti et al. 2022) recomputes only the attention core: the hardware count is the model count
// plus one more forward of QK^T and scores x V, 4*B*S^2*L*H.

#include "sim/schedule/model.hpp"
#include "sim/schedule/training.hpp"

namespace exasim::schedule {

[[nodiscard]] double megatron_flops(const ModelSpec& model, std::int64_t global_batch, double coefficient);
[[nodiscard]] inline double model_flops(const ModelSpec& m, std::int64_t global_batch) {
  return megatron_flops(m, global_batch, 72);
}
/// Flops the GPUs execute, recomputation included (96 under full recomputation, 72 + the attention core
/// under selective, 72 without).
[[nodiscard]] double hardware_flops(const ModelSpec& m, std::int64_t global_batch, Recompute recompute);

}  // namespace exasim::schedule
