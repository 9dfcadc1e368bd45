#include "sim/gpu/kernel.hpp"

#include <array>

namespace exasim::gpu {

namespace {
constexpr std::array<std::string_view, kMemoryFamilies> kFamilyNames = {"elementwise", "norm",       "softmax",
                                                                        "dropout",     "activation", "optimizer"};
}  // namespace

std::string_view to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::Gemm: return "gemm";
    case KernelKind::FlashAttention: return "attention";
    case KernelKind::MemoryBound: return "memory";
  }
  return "?";
}

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::Bf16: return "bf16";
    case DType::Fp16: return "fp16";
    case DType::Fp32: return "fp32";
    case DType::Fp8: return "fp8";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : {DType::Bf16, DType::Fp16, DType::Fp32, DType::Fp8})
    if (to_string(d) == name) return d;
  return std::nullopt;
}

std::string_view to_string(MemoryFamily family) { return kFamilyNames.at(static_cast<std::size_t>(family)); }

std::optional<MemoryFamily> parse_memory_family(std::string_view name) {
  for (std::size_t i = 0; i < kFamilyNames.size(); ++i)
    if (kFamilyNames[i] == name) return static_cast<MemoryFamily>(i);
  return std::nullopt;
}

std::string_view to_string(GemmLayout layout) {
  switch (layout) {
    case GemmLayout::NN: return "NN";
    case GemmLayout::NT: return "NT";
    case GemmLayout::TN: return "TN";
  }
  return "?";
}

Kernel batched_gemm(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout,
                    DType dtype) {
  const double b = static_cast<double>(batch), dm = static_cast<double>(m), dn = static_cast<double>(n),
               dk = static_cast<double>(k);
  Kernel kernel;
  kernel.kind = KernelKind::Gemm;
  kernel.flops = b * 2 * dm * dn * dk;
  kernel.bytes = b * (bytes_of(dtype) * (dm * dk + dk * dn) + result_bytes_of(dtype) * dm * dn);
  kernel.m = m;
  kernel.n = n;
  kernel.k = k;
  kernel.batch = batch;
  kernel.layout = layout;
  kernel.dtype = dtype;
  return kernel;
}

Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout, DType dtype) {
  return batched_gemm(1, m, n, k, layout, dtype);
}

Kernel memory_kernel(MemoryFamily family, double bytes) {
  Kernel kernel;
  kernel.kind = KernelKind::MemoryBound;
  kernel.bytes = bytes;
  kernel.family = family;
  return kernel;
}

}  // namespace exasim::gpu
