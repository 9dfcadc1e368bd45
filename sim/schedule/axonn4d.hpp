#pragma once
// The AxoNN 4D plan: data parallelism times Agarwal's 3D tensor parallelism (x, y, z), as in
// docs/axonn.md (sections 1-4).
//
// Rank layout: x fastest, then y, z, data. Per GPU batch b = global_batch / (gdata * gz), one micro-batch.
// Per linear layer (W is N_out x K_in): Z all-gather of the weight block, forward GEMM, forward all-reduce
// over X (over Y for transposed layers), backward dX GEMM, backward all-reduce over Y (X), dW GEMM, Z
// reduce-scatter of the weight gradient. Transformer mapping: QKV (H -> H + 2 kv_hidden), attention-out
// (H->H, transposed), MLP up (H -> ffn, or 2 ffn for SwiGLU's gate and up), MLP down (ffn -> H,
// transposed); between them the attention core on the y-shard of heads and the norm, residual/dropout and
// activation kernels of internal/layer_kernels.hpp. Full recomputation repeats each layer's forward (with its
// all-gathers and forward all-reduces) before its backward; selective recomputation repeats only the
// attention core before the attention backward. After backward, the gradient shards are all-reduced over
// data (fp32 by default). Then the optimizer step.
//
// Overlaps (each switchable): OAR runs the backward all-reduce under the dW GEMM; ORS leaves the Z
// reduce-scatters in flight until the end of backward; OAG prefetches the next linear layer's weights
// (depth 1, restarted for each layer's recomputation); `dp` issues each layer's data-parallel
// all-reduce during backward, one layer behind (after that layer's reduce-scatters are done).
//
// LIMITATIONS:
//  - no mixture of experts: a model with experts is refused (model.experts);
//  - biases and layer-norm parameters are left out (their collectives are tiny);
//  - the vocab-parallel embedding / LM head (one tied V x H matrix over the X x Y group) is computed
//    but its small activation collectives (hidden all-gather, cross-entropy reductions) are not
//    modelled; its gradient is all-reduced over Z (in the math type) and joins the data all-reduce;
//  - the attention core of a y-shard of heads runs on each of the gx ranks that hold it (the QKV output
//    is all-reduced over x), so it is computed gx times; the plan charges every rank for it;
//  - one micro-batch per iteration (no gradient accumulation); no pipeline (G_inter = 1), as in the
//    Gordon Bell runs; no weight caching across recomputation.

#include "sim/schedule/model.hpp"
#include "sim/schedule/plan.hpp"
#include "sim/schedule/training.hpp"

namespace exasim::schedule {

enum Axonn4DDim : std::uint8_t { kDimX = 0, kDimY = 1, kDimZ = 2, kDimData = 3 };

struct Axonn4DConfig {
  std::uint32_t gx = 1, gy = 1, gz = 1, gdata = 1;
  [[nodiscard]] std::uint32_t gpus() const { return gx * gy * gz * gdata; }
};

struct OverlapSpec {
  bool oar = true;
  bool ors = true;
  bool oag = true;
  bool dp = false;
  /// Compute slows while communication it overlaps runs (the device's comm_overlap_slowdown); not a
  /// plan setting: the execution core applies it (runtime::Job::compute_slowdown_beside_comm).
  bool interference = true;
};

/// Builds the plan. Preconditions (checked by the scenario loader with file and field in the message,
/// and here again as std::invalid_argument): global_batch divisible by gdata*gz; heads divisible by gy;
/// hidden divisible by gx and gy; the H/gx x H/gy weight block by gz; vocab by gx*gy.
[[nodiscard]] Plan build_axonn4d_plan(const ModelSpec& model, const Axonn4DConfig& grid, const TrainingSpec& training,
                                      const OverlapSpec& overlap);

/// Why a 4D configuration cannot run this model: the scenario field to blame ("training.global_batch",
/// "parallel.gy", ...) and the reason. Empty `why` when it can. Used by loaders and config search.
struct Infeasibility {
  std::string field;
  std::string why;
};
[[nodiscard]] Infeasibility axonn4d_infeasibility(const ModelSpec& model, const Axonn4DConfig& grid,
                                                  std::int64_t global_batch);

}  // namespace exasim::schedule
