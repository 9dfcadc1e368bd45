#include "sim/gpu/devices.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/gpu_model.hpp"

#include <algorithm>
#include <iterator>

namespace exasim::gpu {

namespace {

// Source strings shared by several devices. Tags ([H*], [F*], [A*], [S2] = the secondary survey that quotes
// the AxoNN SC24 paper's single-GPU GEMM rates) are entries of docs/sources.md, section 3.
constexpr const char* kEst = "estimate, unconfirmed: ";

std::string est(const std::string& why) { return kEst + why; }

enum class Vendor { Nvidia, Amd };

// Sustained fraction of HBM bandwidth per memory-bound kernel family and vendor. None is measured: the
// whole table is estimates, kept in one place so a measured table can replace it (per device, a machine
// file override or a calibration CSV efficiency row already can). The NVIDIA and AMD columns differ only
// where the kernels differ; `amd_why` says why, and is empty where the figure is the same.
struct FamilyEstimate {
  MemoryFamily family;
  double nvidia;
  double amd;
  const char* why;
  const char* amd_why;
};
constexpr FamilyEstimate kFamilyEstimates[] = {
    {MemoryFamily::Elementwise, 0.80, 0.80,
     "plain streaming kernels typically sustain ~80% of HBM peak (same figure as topologies/presets/"
     "simple-a100.json)",
     ""},
    {MemoryFamily::Norm, 0.70, 0.65,
     "fused LayerNorm/RMSNorm holds a row in registers and does block-wide reductions (mean, variance; "
     "dgamma/dbeta across rows in backward) before it writes: below plain streaming",
     "; lower on MI250X: the fused kernels are written for 32-wide CUDA warps and run HIP-ported on 64-wide "
     "wavefronts"},
    {MemoryFamily::Softmax, 0.70, 0.60,
     "fused scale-mask-softmax does a max and a sum reduction per row and also reads the mask: below plain "
     "streaming",
     "; lower on MI250X: Megatron's fused softmax is written for CUDA warps and runs HIP-ported"},
    {MemoryFamily::Dropout, 0.75, 0.70,
     "draws a random number per element (Philox) and writes a 1-byte mask beside its output: a bit below "
     "plain streaming",
     "; a bit lower on MI250X: the fused dropout kernels are HIP ports of CUDA code"},
    {MemoryFamily::Activation, 0.80, 0.80,
     "bias+GeLU and silu(gate)*up are pointwise maps that stream like elementwise kernels (their arithmetic "
     "is bounded separately by the fp32 vector peak)",
     ""},
    {MemoryFamily::Optimizer, 0.65, 0.60,
     "multi-tensor Adam streams four fp32 tensors (param, grad, m, v) in chunked launches over many tensors "
     "of uneven size; tails and launch gaps keep it below plain streaming",
     "; lower on MI250X: apex's multi-tensor apply is a HIP port of the CUDA kernel"},
};
static_assert(std::size(kFamilyEstimates) == static_cast<std::size_t>(kMemoryFamilies),
              "one estimate per memory family");

void set_family_estimates(DeviceSpec& d, Vendor vendor) {
  for (const auto& e : kFamilyEstimates) {
    const bool amd = vendor == Vendor::Amd;
    d.*DeviceSpec::efficiency_figure(e.family) = {amd ? e.amd : e.nvidia,
                                                  est(std::string(e.why) + (amd ? e.amd_why : ""))};
  }
}

Figure overlap_slowdown_measured() {
  return {0.189,
          "[KR2] compute kernels overlapped with communication ran 18.9% slower on average (max 40%), measured "
          "per kernel on A100, H100, MI250 and MI210 in GPT and LLaMA training; the mean over devices, no "
          "per-device figure is published"};
}
Figure launch_estimate() {
  return {5e-6, est("a few microseconds of launch and tail per kernel, as in topologies/presets/simple-a100.json")};
}
Figure tile_estimate() {
  return {128, est("128x128 bf16 output macro-tile, typical of cuBLAS/rocBLAS large-GEMM kernels; libraries "
                   "pick other tiles per shape")};
}
Figure k_overhead_estimate() {
  return {128, est("per-tile prologue/pipeline fill/epilogue worth ~2 k-blocks of 64; costs ~1.5% at k=8192, "
                   "20% at k=512")};
}
Figure nvidia_layout_factor() {
  return {1.0, est("cuBLAS ships tuned kernels for every transpose combination; no layout penalty is reported "
                   "in docs/sources.md")};
}

// The estimates every NVIDIA part shares (no measurement distinguishes them yet).
void set_nvidia_estimates(DeviceSpec& d) {
  set_family_estimates(d, Vendor::Nvidia);
  d.kernel_launch_s = launch_estimate();
  d.comm_overlap_slowdown = overlap_slowdown_measured();
  d.layout_nt_factor = nvidia_layout_factor();
  d.layout_tn_factor = nvidia_layout_factor();
  d.gemm_tile_m = tile_estimate();
  d.gemm_tile_n = tile_estimate();
  d.gemm_k_overhead = k_overhead_estimate();
}

DeviceSpec nvidia_h100_common(std::string name, std::string description) {
  DeviceSpec d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.peak_bf16_flops = {989e12, "[H2][H5] H100 SXM dense bf16 (docs/sources.md 2.5)"};
  d.peak_fp16_flops = {989e12,
                       "[H2][H5] H100 SXM dense fp16 tensor peak, equal to bf16 (docs/sources.md "
                       "2.5)"};
  d.peak_fp32_flops = {67e12, est("H100 SXM datasheet vector fp32 (~67 TF), not in docs/sources.md")};
  d.peak_fp32_gemm_flops = {67e12, est("H100 SXM datasheet vector fp32 (67 TF; the GH200 and H200 datasheets list "
                                       "the same), not in docs/sources.md: without TF32 (PyTorch's matmul "
                                       "default since 1.12) cuBLAS runs fp32 GEMMs on the CUDA cores")};
  d.compute_units = {132, est("H100 SXM5 has 132 SMs (NVIDIA whitepaper, not in docs/sources.md); consistent with "
                              "989 TF = 132 SM x 4096 flop/clk x 1.83 GHz")};
  d.clock_hz = {1.83e9, est("clock implied by 989 TF at 132 SMs x 4096 flop/clk; the actual boost clock and "
                            "any power cap are unknown")};
  d.attention_efficiency = {0.40, est("FlashAttention-2 reaches roughly 35-50% of H100 peak (it was written "
                                      "for A100; Hopper-specific kernels do better)")};
  set_nvidia_estimates(d);
  return d;
}

DeviceSpec a100_common(std::string name, std::string description) {
  DeviceSpec d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.peak_bf16_flops = {312e12, "[H1][H5] A100 SXM4 dense bf16 (docs/sources.md 2.2, 2.5)"};
  d.peak_fp16_flops = {312e12,
                       "[H1][H5] A100 SXM4 dense fp16 tensor peak, equal to bf16 (docs/sources.md "
                       "2.2, 2.5)"};
  d.peak_fp32_flops = {19.5e12, est("A100 datasheet vector fp32 (19.5 TF), not in docs/sources.md")};
  d.peak_fp32_gemm_flops = {19.5e12, est("A100 datasheet vector fp32 (19.5 TF), not in docs/sources.md: without "
                                         "TF32 (PyTorch's matmul default since 1.12) cuBLAS runs fp32 GEMMs on the "
                                         "CUDA cores")};
  d.compute_units = {108, est("A100 has 108 SMs (NVIDIA whitepaper, not in docs/sources.md); consistent with 312 TF = "
                              "108 SM x 2048 flop/clk x 1.41 GHz")};
  d.clock_hz = {1.41e9, est("A100 boost clock 1.41 GHz (NVIDIA whitepaper, not in docs/sources.md)")};
  d.gemm_achievable_fraction = {271.2 / 312.0,
                                "[KR1] 271.2 TF, the maximum achievable bf16 matmul rate of an A100 SXM over a search "
                                "of shapes (best 1024x10240x5120, torch 2.6/cu126) / 312 TF peak; it replaces the "
                                "~280 TF that docs/sources.md 2.5 [S2] quotes second-hand from one microbenchmark"};
  d.attention_efficiency = {0.55, est("FlashAttention-2 reports roughly 50-70% of A100 peak (same figure as "
                                      "topologies/presets/simple-a100.json)")};
  set_nvidia_estimates(d);
  return d;
}

std::vector<DeviceSpec> build_table() {
  std::vector<DeviceSpec> table;

  {
    DeviceSpec d;
    d.name = "mi250x-gcd";
    d.description = "AMD Instinct MI250X, one GCD (half a module), 64 GB HBM2e";
    d.peak_bf16_flops = {191.5e12,
                         "[H6][H7] 383 TF per MI250X / 2 GCDs = 1024 flop/clk/CU x 110 CU x 1.7 GHz "
                         "(docs/sources.md 2.1)"};
    d.peak_fp16_flops = {191.5e12,
                         "[H6][H7] 383 TF FP16/BF16 matrix per MI250X / 2 GCDs: fp16 and bf16 both "
                         "1024 flop/clk/CU (docs/sources.md 2.1)"};
    d.peak_fp32_flops = {23.95e12, est("AMD lists vector fp32 equal to vector fp64, and [F1] gives 23.9 TF fp64 "
                                       "vector per GCD; packed-fp32 (2x) not modelled")};
    d.peak_fp32_gemm_flops = {47.85e12, est("MI250X datasheet FP32 matrix 95.7 TF per module / 2 GCDs, not in "
                                            "docs/sources.md (it equals the 47.9 TF FP64 matrix per GCD of [F1]); "
                                            "assumes rocBLAS runs fp32 GEMMs on the matrix cores")};
    d.hbm_bandwidth_Bps = {1.6384e12, "[F1][H7] 1.6 TB/s per GCD (1.6384 exact)"};
    d.hbm_capacity_bytes = {64e9, "[F1] 64 GB HBM2e per GCD"};
    d.compute_units = {110, "[H7] 110 CUs per GCD"};
    d.clock_hz = {1.7e9, "[H7] 1.7 GHz peak engine clock"};
    d.gemm_achievable_fraction = {125.0 / 191.5,
                                  "docs/sources.md 2.5 [S2]: ~125 TF measured on one GCD bf16 GEMM / 191.5 TF peak; "
                                  "microbenchmark, secondary source"};
    d.attention_efficiency = {0.35, est("ROCm FlashAttention-2 ports run well below the CUDA kernels; the GEMM "
                                        "ratio 125/191.5 times A100's attention/GEMM ratio gives ~0.35")};
    set_family_estimates(d, Vendor::Amd);
    d.kernel_launch_s = launch_estimate();
    d.comm_overlap_slowdown = overlap_slowdown_measured();
    d.layout_nt_factor = {1.0, est("no NT measurement in docs/sources.md; assumed as fast as NN")};
    d.layout_tn_factor = {2.0, est("docs/axonn.md section 5: [S2] reports TN->NN ~8x faster for GEMMs of a 320B model "
                                   "(rocBLAS TN kernels weak); 8x is one secondary, shape-specific figure, so a "
                                   "conservative 2x is used")};
    d.gemm_tile_m = tile_estimate();
    d.gemm_tile_n = tile_estimate();
    d.gemm_k_overhead = k_overhead_estimate();
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = a100_common("a100-40gb", "NVIDIA A100 SXM4 40 GB HBM2 (Perlmutter's 1,536-node partition)");
    d.hbm_bandwidth_Bps = {1.555e12, "[H1][H4] 1,555 GB/s"};
    d.hbm_capacity_bytes = {40e9, "[H1] 40 GB HBM2"};
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = a100_common("a100-80gb", "NVIDIA A100 SXM4 80 GB HBM2e (Perlmutter's 256-node partition)");
    d.hbm_bandwidth_Bps = {2.039e12, "[H4][H5] 2,039 GB/s"};
    d.hbm_capacity_bytes = {80e9, "[H1][H5] 80 GB HBM2e"};
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = nvidia_h100_common("gh200", "NVIDIA GH200, its H100 with 96 GB HBM3 (Alps)");
    d.hbm_bandwidth_Bps = {4.0e12, "[A2][A3] <=4,000 GB/s HBM3 (docs/sources.md 2.3)"};
    d.hbm_capacity_bytes = {96e9, "[A2][A3] 96 GB HBM3 (~94 GB usable)"};
    d.gemm_achievable_fraction = {813.0 / 989.0,
                                  "docs/sources.md 2.5 [S2]: ~813 TF measured on GH200's H100 bf16 GEMM / 989 TF peak; "
                                  "microbenchmark, secondary source; Alps clocks/power caps unconfirmed"};
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = nvidia_h100_common("h100-sxm", "NVIDIA H100 SXM5 80 GB HBM3");
    d.hbm_bandwidth_Bps = {3.35e12, "[H2][H5] 3,350 GB/s"};
    d.hbm_capacity_bytes = {80e9, "[H2][H5] 80 GB HBM3"};
    d.gemm_achievable_fraction = {794.5 / 989.0,
                                  "[KR1] 794.5 TF, the maximum achievable bf16 matmul rate of an H100 SXM over a "
                                  "search of shapes (best 2048x2048x13312, torch 2.7/cu126) / 989 TF peak"};
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = nvidia_h100_common("h200", "NVIDIA H200 SXM 141 GB HBM3e");
    d.peak_bf16_flops = {989e12, "[H3][H5] same tensor-core peak as H100 SXM"};
    d.peak_fp16_flops = {989e12, "[H3][H5] same tensor-core peak as H100 SXM (fp16 equal to bf16)"};
    d.hbm_bandwidth_Bps = {4.8e12, "[H3][H5] 4,800 GB/s"};
    d.hbm_capacity_bytes = {141e9, "[H3][H5] 141 GB HBM3e"};
    d.gemm_achievable_fraction = {794.5 / 989.0,
                                  "[KR1] H100 SXM's 794.5 TF / 989 TF (the source lists H200 as the same: same "
                                  "compute silicon and clocks)"};
    table.push_back(std::move(d));
  }
  return table;
}

}  // namespace

double DeviceSpec::peak_flops(DType dtype) const {
  switch (dtype) {
    case DType::Bf16: return peak_bf16_flops.value;
    case DType::Fp16: return peak_fp16_flops.value;
    case DType::Fp32: return peak_fp32_gemm_flops.value;
  }
  return peak_bf16_flops.value;
}

Figure DeviceSpec::*DeviceSpec::efficiency_figure(MemoryFamily family) {
  switch (family) {
    case MemoryFamily::Elementwise: return &DeviceSpec::memory_efficiency;
    case MemoryFamily::Norm: return &DeviceSpec::norm_efficiency;
    case MemoryFamily::Softmax: return &DeviceSpec::softmax_efficiency;
    case MemoryFamily::Dropout: return &DeviceSpec::dropout_efficiency;
    case MemoryFamily::Activation: return &DeviceSpec::activation_efficiency;
    case MemoryFamily::Optimizer: return &DeviceSpec::optimizer_efficiency;
  }
  return &DeviceSpec::memory_efficiency;
}

const std::vector<DeviceSpec>& devices() {
  static const std::vector<DeviceSpec> table = build_table();
  return table;
}

std::vector<std::string> device_names() {
  std::vector<std::string> names;
  for (const auto& d : devices()) names.push_back(d.name);
  return names;
}

std::optional<DeviceSpec> find_device(std::string_view name) {
  const auto& table = devices();
  auto it = std::find_if(table.begin(), table.end(), [&](const DeviceSpec& d) { return d.name == name; });
  if (it == table.end()) return std::nullopt;
  return *it;
}

const DeviceSpec& require_device(std::string_view name, const std::string& source, const std::string& field) {
  const auto& table = devices();
  auto it = std::find_if(table.begin(), table.end(), [&](const DeviceSpec& d) { return d.name == name; });
  if (it != table.end()) return *it;
  std::string known;
  for (const auto& d : table) known += (known.empty() ? "" : ", ") + d.name;
  throw InputError(source, field, "unknown device '" + std::string(name) + "' (known: " + known + ")");
}

GpuSpec to_gpu_spec(const DeviceSpec& d) {
  GpuSpec s;
  s.name = d.name;
  s.peak_bf16_flops = d.peak_bf16_flops.value;
  s.gemm_efficiency = d.gemm_achievable_fraction.value;
  s.attention_efficiency = d.attention_efficiency.value;
  s.hbm_bandwidth_Bps = d.hbm_bandwidth_Bps.value;
  s.memory_efficiency = d.memory_efficiency.value;
  s.hbm_capacity_bytes = d.hbm_capacity_bytes.value;
  s.kernel_launch_s = d.kernel_launch_s.value;
  return s;
}

}  // namespace exasim::gpu
