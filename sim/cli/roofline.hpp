#pragma once
// `exasim roofline`: how long one kernel takes on a device, and why (compute or memory bound): a GEMM
// (optionally batched, in bf16, fp16, fp32 or fp8) or a memory-bound kernel of one family.

#include <cstdint>
#include <nlohmann/json.hpp>

#include <string>

namespace exasim::cli {

/// `gemm` is "M,N,K"; `layout` nn|nt|tn; `dtype` bf16|fp16|fp32|fp8 (fp8 only on a device with FP8); `batch` >= 1.
/// InputError on an unknown device or a malformed shape, dtype or batch.
[[nodiscard]] nlohmann::ordered_json roofline(const std::string& device, const std::string& gemm,
                                              const std::string& layout, const std::string& dtype = "bf16",
                                              std::int64_t batch = 1);

/// `memory` is "FAMILY,BYTES" (family: elementwise, norm, softmax, dropout, activation, optimizer).
/// InputError on an unknown device or family, or bytes that are not a positive number.
[[nodiscard]] nlohmann::ordered_json roofline_memory(const std::string& device, const std::string& memory);

}  // namespace exasim::cli
