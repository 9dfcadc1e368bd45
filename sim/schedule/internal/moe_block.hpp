#pragma once
// The routed experts of a MoE layer in the Megatron plan (megatron.hpp), as Megatron-Core's MoELayer with
// its all-to-all token dispatcher (MoEAlltoAllTokenDispatcher) and grouped expert GEMMs runs them.
//
// Ranks, as Megatron-Core's expert rank generator orders them ("tp-cp-ep-dp-pp" with the expert tensor
// parallel degree etp in tp's place): inside a pipeline stage's block of R = tp x dp ranks, expert tensor
// parallelism is fastest (stride 1, etp ranks), then expert parallelism (stride etp, ep ranks), then the
// expert data parallelism that reduces expert gradients (stride etp x ep, edp = R / (etp ep) ranks). With
// etp = tp (Megatron's default) an EP group is ep ranks of equal tp index from consecutive data-parallel
// replicas: the EP groups are carved out of the data-parallel ranks. They are views of the grid
// (ProcessGrid::add_view): "ep", "edp", and "etp" when 1 < etp < tp (etp = tp uses tp's groups).
//
// Per MoE layer and micro-batch a rank routes its n tokens (its sequence shard: Megatron-Core requires
// sequence parallelism with tp > 1, so n = micro_batch x seq / tp), with copies = n x top_k x kept:
//   forward   router GEMM n x experts x h; softmax + top-k (fp32 probabilities);
//             permute: gather the copies into expert order (read n h, write copies h, math type);
//             dispatch AllToAll over ep, S = n top_k h e, rank i -> j: S x share_j (moe.hpp);
//             with etp > 1 an all-gather over etp of the received rows (Megatron gathers them over the
//             expert tensor-parallel group), the expert GEMMs on ffn / etp columns, a reduce-scatter after;
//             expert GEMMs, one grouped GEMM per set of local experts with equal rows (one for all
//             under uniform routing), up (rows x up_out/etp x h), activation, down (rows x h x ffn/etp);
//             combine AllToAllReverse over ep, S; unpermute: the copies weighted by their probabilities
//             and summed per token (read copies h, write n h);
//   backward  the mirror: unpermute's backward, the combine's gradient back as an AllToAll, the etp
//             all-gather, each expert GEMM's dgrad (NN) and wgrad (NT), activation backward, the etp
//             reduce-scatter, the dispatch's gradient back as an AllToAllReverse, permute's backward,
//             softmax backward, router dgrad and wgrad.
// A rank's experts compute rows_e = etp x ep x n x top_k x share_e copies each (what the ep sources send
// it, gathered over etp). Where the ranks' shares differ (expert_skew), each expert-parallel coordinate
// gets its own stream (Plan::role_subdim).
//
// LIMITATIONS: no overlap of the all-to-alls with compute (Megatron-Core's moe_shared_expert_overlap and
// its 1F1B a2a overlap are off by default); the router's TP gradient all-reduce under sequence
// parallelism and its load-balancing loss are not modelled; the permutation kernels are plain streaming
// kernels (no fused permute); a grouped GEMM is costed as a batched GEMM of equal shapes (cuBLAS grouped
// GEMM and TE's GroupedLinear launch one kernel per group or expert).

#include "sim/schedule/grid.hpp"
#include "sim/schedule/internal/layer_kernels.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/moe.hpp"
#include "sim/schedule/stream_builder.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace exasim::schedule {

/// The expert groups of a Megatron plan and the routing that loads them.
struct MoeLayout {
  std::uint32_t ep = 1, etp = 1, edp = 1;
  std::uint8_t ep_dim = 0, edp_dim = 0;
  std::uint8_t etp_dim = 0;  ///< meaningful when etp > 1
  std::int64_t local_experts = 0;
  ExpertRouting routing;
};

/// Why `cfg`'s expert parallelism cannot run `model` (field and reason; empty `why` when it can).
[[nodiscard]] Infeasibility megatron_moe_infeasibility(const ModelSpec& model, const MegatronConfig& cfg);

/// Adds the views of the header to `grid` (a Megatron grid whose pp dimension is `pp_dim`) and routes.
[[nodiscard]] MoeLayout add_expert_views(ProcessGrid& grid, std::size_t pp_dim, const ModelSpec& model,
                                         const MegatronConfig& cfg);

/// One rank's part of a MoE layer per micro-batch.
struct MoeBlockShape {
  std::int64_t hidden = 0, experts = 0, top_k = 0;
  std::int64_t ffn = 0, up_out = 0;  ///< one expert's widths before the etp split
  std::int64_t tokens = 0;           ///< n: tokens this rank routes
  double kept = 1;                   ///< routing.kept()
  std::uint32_t etp = 1;
  std::uint8_t ep_dim = 0, etp_dim = 0;
  std::vector<double> expert_rows;                      ///< per local expert: copies it computes (after the etp gather)
  [[nodiscard]] double dispatch_bytes(double e) const;  ///< S = n top_k h e
  [[nodiscard]] double computed_rows() const;           ///< copies its experts compute: sum of rows
  [[nodiscard]] double received_rows() const;           ///< copies this rank receives: sum of rows / etp
};

/// The block of the rank at expert-parallel coordinate `ep_rank`, routing `tokens` tokens per micro-batch.
[[nodiscard]] MoeBlockShape moe_block_shape(const ModelSpec& model, const MoeLayout& layout, std::int64_t tokens,
                                            std::uint32_t ep_rank);

/// Emits a MoE layer's routed part into a stream (the shared experts and the residual are the plan's).
class MoeBlock {
 public:
  MoeBlock(StreamBuilder& out, const LayerKernels& kernels, MoeBlockShape shape)
      : out_(out), k_(kernels), s_(std::move(shape)) {}
  /// `layer`: "L3"; `pass`: ".fwd" or ".recompute".
  void forward(const std::string& layer, const std::string& pass);
  void backward(const std::string& layer);

 private:
  [[nodiscard]] double copies() const;
  /// The router's GEMMs: never fp8 (Megatron-Core's router is not a Transformer Engine module).
  [[nodiscard]] gpu::Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) const;
  /// One grouped GEMM per set of local experts with equal rows: m = rows, n and k from `shape(rows)`; fp8
  /// under training.dtype fp8 (TE's grouped linear), after the cast of its activation operand of
  /// `cast_width` x rows values.
  template <class Shape>
  void expert_gemms(const std::string& name, std::int64_t cast_width, Shape shape);
  void etp_collective(const std::string& name, CollKind kind);

  StreamBuilder& out_;
  const LayerKernels& k_;
  MoeBlockShape s_;
};

}  // namespace exasim::schedule
