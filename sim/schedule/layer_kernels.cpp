#include "sim/schedule/internal/layer_kernels.hpp"

namespace exasim::schedule {

namespace {

using gpu::MemoryFamily;

}  // namespace

LayerKernels::LayerKernels(const ModelSpec& model, const TrainingSpec& training)
    : training_(training), activation_(model.activation), e_(training.element_bytes()) {}

gpu::Kernel LayerKernels::norm_forward(double elements) const {
  return gpu::memory_kernel(MemoryFamily::Norm, 2 * e_ * elements);
}

gpu::Kernel LayerKernels::norm_backward(double elements) const {
  return gpu::memory_kernel(MemoryFamily::Norm, 3 * e_ * elements);
}

gpu::Kernel LayerKernels::residual_forward(double elements) const {
  if (dropout()) return gpu::memory_kernel(MemoryFamily::Dropout, (3 * e_ + kDropoutMaskBytes) * elements);
  return gpu::memory_kernel(MemoryFamily::Elementwise, 3 * e_ * elements);
}

std::vector<NamedKernel> LayerKernels::residual_backward(double elements) const {
  std::vector<NamedKernel> ks;
  if (dropout()) ks.push_back({".dropout", dropout_backward(elements)});
  ks.push_back({"", gpu::memory_kernel(MemoryFamily::Elementwise, 3 * e_ * elements)});
  return ks;
}

gpu::Kernel LayerKernels::dropout_forward(double elements) const {
  return gpu::memory_kernel(MemoryFamily::Dropout, (2 * e_ + kDropoutMaskBytes) * elements);
}

gpu::Kernel LayerKernels::dropout_backward(double elements) const {
  return gpu::memory_kernel(MemoryFamily::Dropout, (2 * e_ + kDropoutMaskBytes) * elements);
}

gpu::Kernel LayerKernels::activation_forward(double ffn_elements) const {
  const double per_element = activation_ == Activation::Swiglu ? 3 * e_ : 2 * e_;
  return gpu::memory_kernel(MemoryFamily::Activation, per_element * ffn_elements);
}

gpu::Kernel LayerKernels::activation_backward(double ffn_elements) const {
  const double per_element = activation_ == Activation::Swiglu ? 5 * e_ : 3 * e_;
  return gpu::memory_kernel(MemoryFamily::Activation, per_element * ffn_elements);
}

gpu::Kernel LayerKernels::elementwise(double bytes) { return gpu::memory_kernel(MemoryFamily::Elementwise, bytes); }

gpu::Kernel LayerKernels::linear_gemm(std::int64_t m, std::int64_t n, std::int64_t k, gpu::GemmLayout layout) const {
  return gpu::gemm(m, n, k, layout, linear_dtype());
}

std::vector<NamedKernel> LayerKernels::fp8_cast(double elements) const {
  if (!training_.fp8()) return {};
  // Cast-transpose: read the bf16 tensor (e bytes), write it in fp8 row- and column-major.
  const double bytes = (e_ + 2 * gpu::bytes_of(gpu::DType::Fp8)) * elements;
  return {{".fp8_cast", elementwise(bytes)}};
}

std::vector<NamedKernel> LayerKernels::attention_forward(const AttentionSlice& a) const {
  const double b = static_cast<double>(a.batch), s = static_cast<double>(a.seq);
  const double q_width = static_cast<double>(a.heads * a.head_dim);
  const double kv_width = static_cast<double>(a.kv_heads * a.head_dim);
  if (training_.attention == AttentionImpl::Flash) {
    gpu::Kernel k;
    k.kind = gpu::KernelKind::FlashAttention;
    k.dtype = dtype();
    k.flops = 2 * b * s * s * q_width;                    // 4 b s^2 h for QK^T and PV, halved by the causal mask
    k.bytes = e_ * b * s * (2 * q_width + 2 * kv_width);  // Q and O at the query width, K and V at kv width
    return {{"", k}};
  }
  const std::int64_t batch = a.batch * a.heads;
  const double probabilities = b * static_cast<double>(a.heads) * s * s;
  std::vector<NamedKernel> ks;
  ks.push_back({".scores_bmm", gpu::batched_gemm(batch, a.seq, a.seq, a.head_dim, gpu::GemmLayout::NN, dtype())});
  ks.push_back({".softmax", gpu::memory_kernel(MemoryFamily::Softmax, 2 * e_ * probabilities)});
  if (dropout()) ks.push_back({".dropout", dropout_forward(probabilities)});
  ks.push_back({".context_bmm", gpu::batched_gemm(batch, a.seq, a.head_dim, a.seq, gpu::GemmLayout::NN, dtype())});
  return ks;
}

std::vector<NamedKernel> LayerKernels::attention_backward(const AttentionSlice& a) const {
  if (training_.attention == AttentionImpl::Flash) {
    auto forward = attention_forward(a).front();
    forward.kernel.flops *= 2.5;  // FlashAttention-2: recomputed QK^T, then dV, dP, dQ, dK
    forward.kernel.bytes *= 2;    // Q, K, V, O, dO in; dQ, dK, dV out (and the softmax statistics)
    return {forward};
  }
  const std::int64_t batch = a.batch * a.heads;
  const double probabilities = static_cast<double>(a.batch) * static_cast<double>(a.heads) *
                               static_cast<double>(a.seq) * static_cast<double>(a.seq);
  auto bmm = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    return gpu::batched_gemm(batch, m, n, k, gpu::GemmLayout::NN, dtype());
  };
  std::vector<NamedKernel> ks;
  ks.push_back({".dv_bmm", bmm(a.seq, a.head_dim, a.seq)});  // P^T dO
  ks.push_back({".dp_bmm", bmm(a.seq, a.seq, a.head_dim)});  // dO V^T
  if (dropout()) ks.push_back({".dropout", dropout_backward(probabilities)});
  ks.push_back({".softmax", gpu::memory_kernel(MemoryFamily::Softmax, 3 * e_ * probabilities)});
  ks.push_back({".dq_bmm", bmm(a.seq, a.head_dim, a.seq)});  // dS K
  ks.push_back({".dk_bmm", bmm(a.seq, a.head_dim, a.seq)});  // dS^T Q
  return ks;
}

gpu::Kernel LayerKernels::optimizer_step(double params, double grad_bytes) const {
  // Mixed precision: fp32 master weight, m and v read and written (24 B) plus the half weight written.
  const double state_bytes = training_.mixed_precision() ? 24 + e_ : 24;
  return gpu::memory_kernel(MemoryFamily::Optimizer, (grad_bytes + state_bytes) * params);
}

gpu::Kernel LayerKernels::grad_accumulation_add(double params, double grad_bytes) const {
  return gpu::memory_kernel(MemoryFamily::Elementwise, (e_ + 2 * grad_bytes) * params);
}

}  // namespace exasim::schedule
