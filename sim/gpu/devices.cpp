#include "sim/gpu/devices.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/gpu_model.hpp"

#include <algorithm>
#include <iterator>
#include <sstream>

namespace exasim::gpu {

namespace {

// Source strings shared by several devices. Tags ([H*], [F*], [A*], [S2] = the secondary survey that quotes
// the AxoNN SC24 paper's single-GPU GEMM rates) are entries of docs/sources.md, section 3.
constexpr const char* kEst = "estimate, unconfirmed: ";

std::string est(const std::string& why) { return kEst + why; }

/// A figure as a source string quotes it: 708, 1307.4.
std::string fmt(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

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
     "; lower on AMD GPUs: the fused kernels are written for 32-wide CUDA warps and run HIP-ported on 64-wide "
     "wavefronts"},
    {MemoryFamily::Softmax, 0.70, 0.60,
     "fused scale-mask-softmax does a max and a sum reduction per row and also reads the mask: below plain "
     "streaming",
     "; lower on AMD GPUs: Megatron's fused softmax is written for CUDA warps and runs HIP-ported"},
    {MemoryFamily::Dropout, 0.75, 0.70,
     "draws a random number per element (Philox) and writes a 1-byte mask beside its output: a bit below "
     "plain streaming",
     "; a bit lower on AMD GPUs: the fused dropout kernels are HIP ports of CUDA code"},
    {MemoryFamily::Activation, 0.80, 0.80,
     "bias+GeLU and silu(gate)*up are pointwise maps that stream like elementwise kernels (their arithmetic "
     "is bounded separately by the fp32 vector peak)",
     ""},
    {MemoryFamily::Optimizer, 0.65, 0.60,
     "multi-tensor Adam streams four fp32 tensors (param, grad, m, v) in chunked launches over many tensors "
     "of uneven size; tails and launch gaps keep it below plain streaming",
     "; lower on AMD GPUs: apex's multi-tensor apply is a HIP port of the CUDA kernel"},
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

// The estimates every AMD part shares; the TN layout factor is set per part (rocBLAS's weak TN kernels
// were measured on MI250X only).
void set_amd_estimates(DeviceSpec& d) {
  set_family_estimates(d, Vendor::Amd);
  d.kernel_launch_s = launch_estimate();
  d.comm_overlap_slowdown = overlap_slowdown_measured();
  d.layout_nt_factor = {1.0, est("no NT measurement in docs/sources.md; assumed as fast as NN")};
  d.gemm_tile_m = tile_estimate();
  d.gemm_tile_n = tile_estimate();
  d.gemm_k_overhead = k_overhead_estimate();
}

/// Board power: the vendor's maximum board power (TDP) while training, and an idle estimate.
void set_power(DeviceSpec& d, double busy_w, std::string source) {
  d.busy_power_w = {busy_w, std::move(source)};
  d.idle_power_w = {0.1 * busy_w,
                    est("a tenth of the maximum board power, the order of an idle data-centre GPU's; a GPU waiting "
                        "on communication draws more (its collective kernels run), so the waiting time's energy is a "
                        "lower bound")};
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
  d.peak_fp8_flops = {1979e12, "[H2] H100 SXM and GH200 dense FP8 tensor peak (3,958 TF with sparsity)"};
  // Measured on H100 SXM only; H200 and GH200 have the same compute silicon, and no fp8 GEMM of theirs is
  // measured in docs/sources.md.
  d.gemm_fp8_achievable_fraction = {1402.6 / 1979.0,
                                    "[KR1] 1402.6 TF, the maximum achievable fp8 matmul rate of an H100 SXM over a "
                                    "search of shapes (best 1024x9216x14336, torch 2.7) / 1,979 TF peak (reused for "
                                    "H200 and GH200: the same H100 compute silicon)"};
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
  d.peak_fp8_flops = {0, "[H1] Ampere's tensor cores have no FP8 (bf16, fp16, tf32, int8 only)"};
  d.gemm_fp8_achievable_fraction = {0, "no FP8 tensor cores"};
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

// Blackwell: B200 and GB200's GPUs. Only the peaks, HBM and clocks differ; no Blackwell GEMM, attention or
// memory-bound kernel was measured in docs/sources.md, so the rates are H100 SXM's, marked estimate.
DeviceSpec blackwell_common(std::string name, std::string description) {
  DeviceSpec d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.compute_units = {148, est("148 SMs per Blackwell GPU (two dies of 74 enabled SMs), not in docs/sources.md")};
  d.gemm_achievable_fraction = {794.5 / 989.0,
                                est("H100 SXM's measured bf16 fraction ([KR1] 794.5 / 989 TF) reused: no Blackwell "
                                    "GEMM measurement in docs/sources.md")};
  d.gemm_fp8_achievable_fraction = {1402.6 / 1979.0,
                                    est("H100 SXM's measured fp8 fraction ([KR1] 1402.6 / 1,979 TF) reused: no "
                                        "Blackwell GEMM measurement in docs/sources.md")};
  d.attention_efficiency = {0.40, est("H100's FlashAttention-2 estimate reused: no Blackwell attention measurement in "
                                      "docs/sources.md")};
  set_nvidia_estimates(d);
  return d;
}

/// Sets a Blackwell part's tensor peaks (`source`), its vector fp32 peak (`fp32_datasheet`: the datasheet
/// figure it comes from, not in docs/sources.md) and the clock they imply at 148 SMs.
void set_blackwell_peaks(DeviceSpec& d, double bf16, double fp8, const std::string& source, double fp32,
                         const std::string& fp32_datasheet) {
  d.peak_bf16_flops = {bf16, source + " dense bf16"};
  d.peak_fp16_flops = {bf16, source + " dense fp16, equal to bf16"};
  d.peak_fp8_flops = {fp8, source + " dense FP8"};
  d.peak_fp32_flops = {fp32, est(fp32_datasheet + ", not in docs/sources.md")};
  d.peak_fp32_gemm_flops = {fp32, est(fp32_datasheet + ", not in docs/sources.md: without TF32 (PyTorch's matmul "
                                                       "default since 1.12) cuBLAS runs fp32 GEMMs on the CUDA cores")};
  d.clock_hz = {bf16 / (148.0 * 8192.0),
                est("clock implied by the bf16 peak at 148 SMs x 8192 flop/clk (twice Hopper's dense bf16 per SM); "
                    "the actual boost clock and power caps are unknown")};
}

// AMD CDNA3: MI300X and MI325X have the same compute dies and clocks ([H9][H10]) and differ in HBM and in
// the GEMM rates AMD measured on them ([KR3]).
DeviceSpec cdna3_common(std::string name, std::string description) {
  DeviceSpec d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.peak_bf16_flops = {1307.4e12, "[H9][H10] dense bf16 matrix peak: 2048 flop/clk/CU x 304 CUs x 2.1 GHz"};
  d.peak_fp16_flops = {1307.4e12, "[H9][H10] dense fp16 matrix peak, equal to bf16"};
  d.peak_fp8_flops = {2614.9e12, "[H9][H10] dense FP8 matrix peak (5,229.8 TF with sparsity)"};
  d.peak_fp32_flops = {81.7e12, est("the 81.7 TF vector fp64 of [H9]: AMD's 163.4 TF vector fp32 counts packed fp32 "
                                    "(2x), not modelled, as for MI250X")};
  d.peak_fp32_gemm_flops = {163.4e12, est("the 163.4 TF FP32 matrix of the datasheet [H9]; assumes the BLAS library "
                                          "runs fp32 GEMMs on the matrix cores, as on MI250X")};
  d.compute_units = {304, "[H9] 304 CUs"};
  d.clock_hz = {2.1e9, "[H9] 2,100 MHz peak engine clock"};
  d.attention_efficiency = {0.35, est("MI250X's estimate reused: ROCm's FlashAttention-2 port, no CDNA3 attention "
                                      "measurement in docs/sources.md")};
  set_amd_estimates(d);
  d.layout_tn_factor = {1.0, est("no layout measurement for CDNA3 in docs/sources.md; MI250X's TN penalty was "
                                 "measured with rocBLAS on CDNA2 (docs/axonn.md section 5) and is not carried over to "
                                 "hipBLASLt, whose maximum rates [KR3] reports")};
  return d;
}

/// A CDNA3 part's GEMM fractions from [KR3], AMD's maximum achievable rates (TFLOP/s) on it.
void set_cdna3_gemm_rates(DeviceSpec& d, const std::string& part, double bf16_tflops, double fp8_tflops) {
  const auto source = [&](const char* dtype, double tflops, double peak) {
    return "[KR3] " + fmt(tflops) + " TF, AMD's maximum achievable " + dtype + " GEMM rate of an " + part +
           " (hipBLASLt, random-normal inputs) / " + fmt(peak) + " TF peak";
  };
  d.gemm_achievable_fraction = {bf16_tflops * 1e12 / d.peak_bf16_flops.value,
                                source("bf16", bf16_tflops, d.peak_bf16_flops.value / 1e12)};
  d.gemm_fp8_achievable_fraction = {fp8_tflops * 1e12 / d.peak_fp8_flops.value,
                                    source("fp8", fp8_tflops, d.peak_fp8_flops.value / 1e12)};
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
    d.peak_fp8_flops = {0, "[H6] CDNA2's matrix cores have no FP8 (fp64, fp32, fp16, bf16, int8 only)"};
    d.gemm_fp8_achievable_fraction = {0, "no FP8 matrix cores"};
    d.hbm_bandwidth_Bps = {1.6384e12, "[F1][H7] 1.6 TB/s per GCD (1.6384 exact)"};
    d.hbm_capacity_bytes = {64e9, "[F1] 64 GB HBM2e per GCD"};
    d.compute_units = {110, "[H7] 110 CUs per GCD"};
    d.clock_hz = {1.7e9, "[H7] 1.7 GHz peak engine clock"};
    d.gemm_achievable_fraction = {125.0 / 191.5,
                                  "docs/sources.md 2.5 [S2]: ~125 TF measured on one GCD bf16 GEMM / 191.5 TF peak; "
                                  "microbenchmark, secondary source"};
    d.attention_efficiency = {0.35, est("ROCm FlashAttention-2 ports run well below the CUDA kernels; the GEMM "
                                        "ratio 125/191.5 times A100's attention/GEMM ratio gives ~0.35")};
    set_amd_estimates(d);
    d.layout_tn_factor = {2.0, est("docs/axonn.md section 5: [S2] reports TN->NN ~8x faster for GEMMs of a 320B model "
                                   "(rocBLAS TN kernels weak); 8x is one secondary, shape-specific figure, so a "
                                   "conservative 2x is used")};
    set_power(d, 280, "[H6] MI250X 560 W peak total board power per module / 2 GCDs");
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = a100_common("a100-40gb", "NVIDIA A100 SXM4 40 GB HBM2 (Perlmutter's 1,536-node partition)");
    d.hbm_bandwidth_Bps = {1.555e12, "[H1][H4] 1,555 GB/s"};
    d.hbm_capacity_bytes = {40e9, "[H1] 40 GB HBM2"};
    set_power(d, 400, "[H1] A100 SXM4 maximum TDP 400 W");
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = a100_common("a100-80gb", "NVIDIA A100 SXM4 80 GB HBM2e (Perlmutter's 256-node partition)");
    d.hbm_bandwidth_Bps = {2.039e12, "[H4][H5] 2,039 GB/s"};
    d.hbm_capacity_bytes = {80e9, "[H1][H5] 80 GB HBM2e"};
    set_power(d, 400, "[H1][H4] A100 SXM4 maximum TDP 400 W");
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = nvidia_h100_common("gh200", "NVIDIA GH200, its H100 with 96 GB HBM3 (Alps)");
    d.hbm_bandwidth_Bps = {4.0e12, "[A2][A3] <=4,000 GB/s HBM3 (docs/sources.md 2.3)"};
    d.hbm_capacity_bytes = {96e9, "[A2][A3] 96 GB HBM3 (~94 GB usable)"};
    d.gemm_achievable_fraction = {813.0 / 989.0,
                                  "docs/sources.md 2.5 [S2]: ~813 TF measured on GH200's H100 bf16 GEMM / 989 TF peak; "
                                  "microbenchmark, secondary source; Alps clocks/power caps unconfirmed"};
    set_power(d, 1000,
              "[H2] GH200 module power configurable from 450 to 1,000 W, its maximum (the Grace CPU and its memory "
              "included)");
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = nvidia_h100_common("h100-sxm", "NVIDIA H100 SXM5 80 GB HBM3");
    d.hbm_bandwidth_Bps = {3.35e12, "[H2][H5] 3,350 GB/s"};
    d.hbm_capacity_bytes = {80e9, "[H2][H5] 80 GB HBM3"};
    d.gemm_achievable_fraction = {794.5 / 989.0,
                                  "[KR1] 794.5 TF, the maximum achievable bf16 matmul rate of an H100 SXM over a "
                                  "search of shapes (best 2048x2048x13312, torch 2.7/cu126) / 989 TF peak"};
    set_power(d, 700, "[H2] H100 SXM maximum TDP up to 700 W (configurable)");
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = nvidia_h100_common("h200", "NVIDIA H200 SXM 141 GB HBM3e");
    d.peak_bf16_flops = {989e12, "[H3][H5] same tensor-core peak as H100 SXM"};
    d.peak_fp16_flops = {989e12, "[H3][H5] same tensor-core peak as H100 SXM (fp16 equal to bf16)"};
    d.peak_fp8_flops = {1979e12, "[H8] H200 SXM dense FP8 tensor peak (3,958 TF with sparsity), as H100 SXM"};
    d.hbm_bandwidth_Bps = {4.8e12, "[H3][H5] 4,800 GB/s"};
    d.hbm_capacity_bytes = {141e9, "[H3][H5] 141 GB HBM3e"};
    d.gemm_achievable_fraction = {794.5 / 989.0,
                                  "[KR1] H100 SXM's 794.5 TF / 989 TF (the source lists H200 as the same: same "
                                  "compute silicon and clocks)"};
    set_power(d, 700, "[H8] H200 SXM maximum TDP up to 700 W (configurable)");
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = cdna3_common("mi300x", "AMD Instinct MI300X OAM 192 GB HBM3");
    d.hbm_bandwidth_Bps = {5.3e12, "[H9] 5.3 TB/s"};
    d.hbm_capacity_bytes = {192e9, "[H9] 192 GB HBM3"};
    set_cdna3_gemm_rates(d, "MI300X", 708, 1273);
    d.gemm_achievable_fraction.source += "; [KR1] measured 668.4 TF (ROCm 6.3, TunableOp)";
    set_power(d, 750, "[H9] MI300X OAM 750 W total board power");
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = cdna3_common("mi325x", "AMD Instinct MI325X OAM 256 GB HBM3E");
    d.hbm_bandwidth_Bps = {6e12, "[H10] 6 TB/s"};
    d.hbm_capacity_bytes = {256e9, "[H10] 256 GB HBM3E"};
    set_cdna3_gemm_rates(d, "MI325X", 843, 1519);
    set_power(d, 1000, "[H10] MI325X OAM 1,000 W total board power");
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = blackwell_common("b200", "NVIDIA B200 SXM 180 GB HBM3e (HGX/DGX B200)");
    set_blackwell_peaks(d, 2.25e15, 4.5e15, "[H11] HGX B200 per GPU, the sparse rate halved:", 75e12,
                        "HGX B200 datasheet vector fp32 (600 TF per 8 GPUs)");
    d.hbm_bandwidth_Bps = {8e12, "[H11] 8 TB/s HBM3e per GPU"};
    d.hbm_capacity_bytes = {180e9,
                            "[H11] DGX B200's 1,440 GB over 8 GPUs: 180 GB HBM3e (launch material quoted "
                            "192 GB)"};
    set_power(d, 1000,
              est("B200 SXM maximum TDP, as HGX B200 systems are specified (1,000 W); not in docs/sources.md"));
    table.push_back(std::move(d));
  }
  {
    DeviceSpec d = blackwell_common("gb200", "NVIDIA GB200, one of its two Blackwell GPUs (GB200 NVL72), 186 GB HBM3e");
    set_blackwell_peaks(d, 2.5e15, 5e15, "[H12] GB200 NVL72 rack figure / 72 GPUs, the sparse rate halved:", 80e12,
                        "GB200 NVL72 datasheet vector fp32 (5,760 TF per 72 GPUs)");
    d.hbm_bandwidth_Bps = {8e12, "[H12] 576 TB/s HBM3e per 72 GPUs: 8 TB/s"};
    d.hbm_capacity_bytes = {186e9, "[H12] 372 GB HBM3e per GB200 superchip (two GPUs): 186 GB"};
    set_power(d, 1200, est("GB200 NVL72 per-GPU power (1,200 W) as reported for the rack; not in docs/sources.md"));
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
    case DType::Fp8: return peak_fp8_flops.value;
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

std::string fp8_device_names() {
  std::string names;
  for (const auto& d : devices())
    if (d.has_fp8()) names += (names.empty() ? "" : ", ") + d.name;
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
