#include "sim/gpu/kernel.hpp"

namespace exasim::gpu {

std::string_view to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::Gemm: return "gemm";
    case KernelKind::FlashAttention: return "attention";
    case KernelKind::MemoryBound: return "memory";
  }
  return "?";
}

std::string_view to_string(GemmLayout layout) {
  switch (layout) {
    case GemmLayout::NN: return "NN";
    case GemmLayout::NT: return "NT";
    case GemmLayout::TN: return "TN";
  }
  return "?";
}

Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout) {
  constexpr double bf16_bytes = 2;
  auto dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  return Kernel{KernelKind::Gemm, 2 * dm * dn * dk, bf16_bytes * (dm * dk + dk * dn + dm * dn), m, n, k, layout};
}

}  // namespace exasim::gpu
