#include "sim/report/compute_breakdown.hpp"

#include <array>
#include <string>

namespace exasim::report {

namespace {

constexpr int kGemm = 0, kBatchedGemm = 1, kFlash = 2, kFirstFamily = 3;
constexpr int kClasses = kFirstFamily + gpu::kMemoryFamilies;

int class_of(const gpu::Kernel& k) {
  switch (k.kind) {
    case gpu::KernelKind::Gemm: return k.batch > 1 ? kBatchedGemm : kGemm;
    case gpu::KernelKind::FlashAttention: return kFlash;
    case gpu::KernelKind::MemoryBound: break;
  }
  return kFirstFamily + static_cast<int>(k.family);
}

std::string class_name(int c) {
  if (c == kGemm) return "gemm";
  if (c == kBatchedGemm) return "batched_gemm";
  if (c == kFlash) return "flash_attention";
  return std::string(gpu::to_string(static_cast<gpu::MemoryFamily>(c - kFirstFamily)));
}

}  // namespace

std::vector<KernelClassTime> compute_by_kernel(const schedule::Plan& plan, const std::vector<double>& kernel_time_s) {
  std::array<double, kClasses> seconds{};
  for (const auto& stream : plan.streams)
    for (const auto& op : stream.ops)
      if (op.type == schedule::OpType::Compute)
        seconds[class_of(plan.kernels.at(op.kernel))] += kernel_time_s.at(op.kernel);
  const double streams = plan.streams.empty() ? 1.0 : static_cast<double>(plan.streams.size());
  std::vector<KernelClassTime> out;
  for (int c = 0; c < kClasses; ++c)
    if (seconds[c] > 0) out.push_back({class_name(c), seconds[c] / streams});
  return out;
}

}  // namespace exasim::report
