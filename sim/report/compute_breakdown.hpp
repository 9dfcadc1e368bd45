#pragma once
// Where a rank's compute time goes, by kernel class: the check a user makes first when a prediction is
// off (is it the GEMMs, the attention core, or the memory-bound kernels between them?).
//
// Classes: "gemm" (linear layers, LM head), "batched_gemm" (standard attention's QK^T and scores x V),
// "flash_attention", and one per memory-bound family (norm, softmax, dropout, activation, elementwise,
// optimizer). Recomputed kernels count in their class.
//
// LIMITATIONS: the mean over the plan's op streams (pipeline stages for Megatron, the one stream of
// AxoNN), each weighted alike; it is the compute the plan asks for, not the time a rank spent computing
// on the critical path (which is the summary's "compute").

#include "sim/schedule/plan.hpp"

#include <string>
#include <vector>

namespace exasim::report {

struct KernelClassTime {
  std::string kernel_class;
  double seconds = 0;
};

/// Seconds per kernel class (classes with no kernel left out), in a fixed order; `kernel_time_s` is
/// indexed like plan.kernels (runtime::Job::kernel_time_s).
[[nodiscard]] std::vector<KernelClassTime> compute_by_kernel(const schedule::Plan& plan,
                                                             const std::vector<double>& kernel_time_s);

}  // namespace exasim::report
