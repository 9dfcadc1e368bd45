#pragma once
// Kernel descriptors of one transformer layer that every scheme shares, so that AxoNN 4D and Megatron
// cost the same work the same way (the GEMMs come from gpu::gemm directly).

#include "sim/gpu/kernel.hpp"

#include <cstdint>

namespace exasim::schedule {

/// Causal flash attention of `batch` sequences of `seq` tokens over `local_hidden` = heads on this GPU
/// times head dim. Forward: QK^T and PV, each 2*b*S^2*h flops, halved by the causal mask. Backward
/// recomputes the scores and runs 5 matmuls instead of 2 (FlashAttention-2): 2.5x the flops.
[[nodiscard]] inline gpu::Kernel flash_attention(std::int64_t batch, std::int64_t seq, double local_hidden,
                                                 bool backward) {
  constexpr double bf16 = 2;
  const double b = static_cast<double>(batch), s = static_cast<double>(seq);
  const double fwd_flops = 2 * b * s * s * local_hidden;
  const double io_bytes = 4 * bf16 * b * s * local_hidden;  // Q, K, V in, O out
  return backward ? gpu::Kernel{gpu::KernelKind::FlashAttention, 2.5 * fwd_flops, 2 * io_bytes}
                  : gpu::Kernel{gpu::KernelKind::FlashAttention, fwd_flops, io_bytes};
}

/// An elementwise / normalisation kernel whose time is set by the bytes it moves.
[[nodiscard]] inline gpu::Kernel memory_bound(double bytes) {
  return gpu::Kernel{gpu::KernelKind::MemoryBound, 0, bytes};
}

/// Mixed-precision Adam per local parameter: read fp32 grad, master, m, v (16 B), write master, m, v
/// (12 B) and the bf16 weight (2 B).
inline constexpr double kAdamBytesPerParam = 30;

}  // namespace exasim::schedule
