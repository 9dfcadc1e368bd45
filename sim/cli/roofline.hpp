#pragma once
// `exasim roofline`: how long one bf16 GEMM takes on a device, and why (compute or memory bound).

#include <nlohmann/json.hpp>

#include <string>

namespace exasim::cli {

/// `gemm` is "M,N,K"; `layout` nn|nt|tn. InputError on an unknown device or a malformed shape.
[[nodiscard]] nlohmann::ordered_json roofline(const std::string& device, const std::string& gemm,
                                              const std::string& layout);

}  // namespace exasim::cli
