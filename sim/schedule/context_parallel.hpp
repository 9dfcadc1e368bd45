#pragma once
// Context parallelism (CP) as Megatron-Core runs it with Transformer Engine's attention: the sequence of
// every micro-batch is split over the cp ranks of a CP group, and only the attention core needs tokens of
// other ranks (every other layer works token by token).
//
// Causal load balancing: the sequence is cut into 2 cp chunks of seq/(2 cp) tokens and CP rank r holds
// chunks r and 2 cp - 1 - r (Megatron-Core's get_batch_on_this_cp_rank), so each rank holds seq/cp tokens
// (its GEMM rows, activations and pipeline tensors are 1/cp of the sequence's) and does 1/cp of the causal
// attention work: in every step below its queries meet one K/V block in a pattern worth half a
// (seq/cp) x (seq/cp) square, which is the causal flops of a seq/cp sequence (the diagonal step is causal,
// the others a full half). So each step is costed as the attention kernel of a seq/cp-token sequence
// (internal/layer_kernels.hpp) and cp steps make 2 b seq^2 h / cp flops forward, 1/cp of the causal total.
//
// The K/V block of a rank, per TP shard: 2 (K and V) x seq/cp tokens x kv_heads/tp x head_dim x
// micro_batch elements of the math type (kv_block_bytes). Communication over the CP group
// (parallel.cp_comm):
//  - p2p (Transformer Engine's AttnFuncWithCPAndKVP2P, Megatron-Core's default): a ring. Forward: cp steps;
//    in step i < cp - 1 each rank sends the block it holds to the next rank and receives the next one from
//    the previous, while the attention of step i runs: cp - 1 blocks sent per layer, each exposed by
//    max(0, transfer - attention step). Backward: cp steps the same way; the K/V blocks go round again and
//    the partial dK/dV of each block follow them to be accumulated and brought home: step 0 sends K/V,
//    steps 1 .. cp - 2 K/V and dK/dV, step cp - 1 dK/dV: 2 (cp - 1) blocks per layer;
//  - all_gather (AttnFuncWithCPAndKVAllGather): forward all-gathers the K/V of the whole sequence (cp
//    blocks) before the attention; backward gathers them again, runs the attention backward, then
//    reduce-scatters dK/dV (cp blocks): no overlap with the attention.
// Per rank on the wire, per layer: forward (cp - 1) blocks, backward 2 (cp - 1) blocks, either way.
// Recomputation repeats the forward's exchange with the forward.
//
// LIMITATIONS:
//  - flash attention only (Megatron-Core's CP needs Transformer Engine's fused attention); the steps are
//    costed as equal kernels, so the diagonal step's causal kernel and the others' half-masked ones run
//    at the same efficiency;
//  - the per-step output correction (softmax statistics merged into the output, fp32) and the dQ / dK / dV
//    accumulation between steps are not modelled (elementwise, a few percent of the attention);
//  - TE's a2a and a2a+p2p (Ulysses-style, hierarchical) variants are not modelled; nor is the CP
//    all-reduce of the loss (a few bytes).

#include "sim/schedule/axonn4d.hpp"  // Infeasibility, TrainingSpec
#include "sim/schedule/model.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace exasim::schedule {

/// How the CP group exchanges K and V (parallel.cp_comm).
enum class CpComm : std::uint8_t { P2p, AllGather };

[[nodiscard]] const char* to_string(CpComm comm);
/// "p2p" or "all_gather"; nullopt for anything else.
[[nodiscard]] std::optional<CpComm> parse_cp_comm(std::string_view name);

/// Why `model` cannot run with `cp` CP ranks under `training` (field "parallel.cp"): 2 cp chunks must
/// divide seq_len, and cp > 1 needs flash attention. Empty `why` when it can.
[[nodiscard]] Infeasibility context_parallel_infeasibility(const ModelSpec& model, std::uint32_t cp,
                                                           const TrainingSpec& training);

/// Bytes of one rank's K/V block: 2 x (seq/cp) x (kv_heads/tp) x head_dim x micro_batch x element_bytes.
[[nodiscard]] double kv_block_bytes(const ModelSpec& model, std::uint32_t tp, std::uint32_t cp,
                                    std::int64_t micro_batch, double element_bytes);

}  // namespace exasim::schedule
