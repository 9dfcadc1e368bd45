#pragma once
// Kernel-name rules: which class a GPU kernel of a measured trace belongs to (GEMM, attention,
// collective, memory-bound, other), which collective an NCCL/RCCL kernel runs, which layout a GEMM
// kernel's name says, and the byte size of the profiler's dtype names. The rules, in the order they are tried, are the
// table of docs/traces.md; the tests (kernel_class_test.cpp) check one name per rule.
//
// LIMITATIONS:
//  - names only: a kernel is classified by its (demangled) name, never by its launch shape or the op
//    that launched it, so a custom kernel with an unusual name falls into "other";
//  - convolutions run as implicit GEMMs (cuDNN xmma, CUTLASS conv) count as gemm;
//  - fused kernels (a GEMM with a fused epilogue, attention with dropout) count once, in the class the
//    rule order gives them first (collective, attention, gemm, memory).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exasim::trace {

enum class KernelClass : std::uint8_t { Gemm, Attention, Collective, Memory, Other };
inline constexpr int kKernelClasses = 5;

enum class CollectiveKind : std::uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, SendRecv, AllToAll, Other };
inline constexpr int kCollectiveKinds = 7;

/// "gemm", "attention", "collective", "memory", "other".
[[nodiscard]] std::string_view to_string(KernelClass cls);
/// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "send_recv", "all_to_all", "other".
[[nodiscard]] std::string_view to_string(CollectiveKind kind);

/// The class of a kernel from its name (docs/traces.md, first matching rule wins).
[[nodiscard]] KernelClass classify_kernel(std::string_view name);

/// The collective an NCCL/RCCL kernel runs: from the profiler's `Collective name` arg when there is one
/// ("allreduce", "_allgather_base", "reduce_scatter_tensor", "send", ...), else from the kernel name
/// (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv, ...); Other when neither says.
[[nodiscard]] CollectiveKind collective_kind(std::string_view kernel_name, std::string_view collective_name);

/// Bytes per element of a profiler dtype name ("Float", "BFloat16", "Half", "Long", "c10::Half",
/// "float", ...); nullopt for a name the table does not know.
[[nodiscard]] std::optional<int> dtype_bytes(std::string_view dtype);

/// "NN", "NT", "TN" (or "TT") as a GEMM kernel's name gives it; empty when it does not.
[[nodiscard]] std::string gemm_layout(std::string_view kernel_name);

/// "bf16", "fp16", "fp32" for a profiler type name ("float", "c10::BFloat16", "c10::Half"); empty otherwise.
[[nodiscard]] std::string calibration_dtype(std::string_view type);

}  // namespace exasim::trace
