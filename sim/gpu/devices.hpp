#pragma once
// Built-in table of GPU devices for the shape-aware model. Every number carries the source it came from,
// so a report can say which inputs are vendor figures, which are measured, and which are guesses; the
// tags ([H1], [F1], [S2], ...) are entries of docs/sources.md, section 3. A figure marked "estimate,
// unconfirmed" is a best guess that no source there backs.
//
// The achievable large-GEMM fraction is taken from single-GPU bf16 GEMM microbenchmarks ([KR1]'s maximum
// achievable matmul rates; AxoNN, SC24, as quoted by [S2], docs/sources.md 2.5) rather than from
// end-to-end training throughput, because the GEMM model
// must not double count the communication and pipeline losses that the simulator models separately.
//
// LIMITATIONS:
//  - one clock per device (the vendor boost clock behind the peak); no power capping, thermal throttling
//    or clock differences between parts (Alps' GH200 caps are unknown, docs/sources.md 2.3);
//  - capacities are the vendor "GB" figures (10^9 bytes); the memory a framework can actually use is
//    lower (driver, allocator and communication buffers are not subtracted here);
//  - the large-GEMM fraction is one number per device (A100 and H100/H200: the maximum over a search of
//    shapes, [KR1]; GH200 and MI250X: one microbenchmark each, [S2]); per-shape rates come only from a
//    calibration CSV (internal/calibration.hpp), and no per-shape table is shipped: no GPU measurement
//    of the shapes the plans emit is in docs/sources.md;
//  - peak_fp32_flops is the vector (non-tensor-core) rate that bounds streaming kernels' arithmetic;
//    peak_fp32_gemm_flops is the rate an fp32 GEMM runs at as PyTorch runs it by default (no TF32 for
//    matmul since PyTorch 1.12): vector FP32 on NVIDIA, FP32 matrix cores on MI250X; TF32 and packed-fp32
//    vector rates are not modelled;
//  - the fp16 peaks are in docs/sources.md; the fp32 GEMM peaks are vendor datasheet figures that are
//    not (so marked estimate); no fp16 or fp32 GEMM was measured, so the achievable fraction (measured on
//    bf16) is assumed to carry over (shape_aware_gpu.hpp);
//  - fp8 GEMMs have a fraction of their own, measured on H100 SXM ([KR1]) and MI300X / MI325X ([KR3]);
//    H200 and GH200 reuse H100's, and B200 / GB200 (no Blackwell GEMM measurement in docs/sources.md)
//    reuse H100's bf16 and fp8 fractions as estimates; one fp8 peak for E4M3 and E5M2 operands;
//  - the efficiencies of flash attention and of every memory-bound kernel family are estimates, not
//    measurements: one number per family and vendor (devices.cpp, kFamilyEstimates), easy to replace with
//    a machine file override or a calibration CSV efficiency row (internal/calibration.hpp).

#include "sim/gpu/kernel.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::gpu {

struct GpuSpec;

/// A number and where it came from.
struct Figure {
  double value = 0;
  std::string source;
};

/// One device as the shape-aware model sees it. Units in the names: flop/s, bytes/s, bytes, Hz, seconds.
/// For MI250X one device is one GCD (what ROCm and Slurm call a GPU).
struct DeviceSpec {
  std::string name;             ///< key used by find_device, e.g. "mi250x-gcd"
  std::string description;      ///< human-readable part name
  Figure peak_bf16_flops;       ///< dense bf16 tensor/matrix-core peak
  Figure peak_fp16_flops;       ///< dense fp16 tensor/matrix-core peak
  Figure peak_fp32_flops;       ///< vector fp32 peak (bounds streaming kernels that do arithmetic)
  Figure peak_fp32_gemm_flops;  ///< peak of an fp32 GEMM as PyTorch runs it by default (no TF32)
  Figure peak_fp8_flops;        ///< dense fp8 tensor/matrix-core peak; 0: no FP8 units (A100, MI250X)
  Figure hbm_bandwidth_Bps;
  Figure hbm_capacity_bytes;
  Figure compute_units;  ///< SMs (NVIDIA) or CUs (AMD): the units a GEMM's output tiles are spread over
  Figure clock_hz;
  /// Sustained fraction of peak_bf16 on large square GEMMs (measured TF / vendor peak); applied to the
  /// peak of the GEMM's dtype, fp8 excepted.
  Figure gemm_achievable_fraction;
  /// The same for fp8 GEMMs against peak_fp8 (fp8 GEMMs reach a lower fraction: H100 70.9 % against
  /// 80.3 % in bf16, [KR1]); 0 on a device without FP8.
  Figure gemm_fp8_achievable_fraction;
  Figure attention_efficiency;  ///< sustained fraction of the dtype's peak for flash attention
  // Sustained fraction of HBM bandwidth, one per memory-bound kernel family (kernel.hpp MemoryFamily).
  // memory_efficiency is the Elementwise family's, and also prices the bytes of GEMMs and attention.
  Figure memory_efficiency;
  Figure norm_efficiency;
  Figure softmax_efficiency;
  Figure dropout_efficiency;
  Figure activation_efficiency;
  Figure optimizer_efficiency;
  Figure kernel_launch_s;  ///< fixed cost per kernel
  /// Fraction by which compute kernels slow while NCCL/RCCL kernels run beside them on the device (the
  /// execution core applies it: sim/exec/executor.hpp).
  Figure comm_overlap_slowdown;
  /// GEMM time multipliers of the NT and TN operand layouts relative to NN (see shape_aware_gpu.hpp).
  Figure layout_nt_factor;
  Figure layout_tn_factor;
  /// Output tile of the vendor GEMM library's large-matrix kernels, and the fixed per-tile cost (prologue,
  /// pipeline fill, epilogue write-out) expressed as extra k-iterations.
  Figure gemm_tile_m;
  Figure gemm_tile_n;
  Figure gemm_k_overhead;
  /// Board power while training (the vendor's maximum board power / TDP) and while idle, in watts: what
  /// `exasim job` prices energy with (sim/job/job_model.hpp); idle figures are estimates.
  Figure busy_power_w;
  Figure idle_power_w;

  [[nodiscard]] int compute_unit_count() const { return static_cast<int>(compute_units.value); }
  /// Tensor/matrix peak a GEMM or attention kernel of `dtype` runs against.
  [[nodiscard]] double peak_flops(DType dtype) const;
  /// Sustained large-GEMM rate: the dtype's peak x achievable fraction (the fp8 one for fp8).
  [[nodiscard]] double achievable_gemm_flops(DType dtype = DType::Bf16) const {
    return peak_flops(dtype) *
           (dtype == DType::Fp8 ? gemm_fp8_achievable_fraction.value : gemm_achievable_fraction.value);
  }
  /// Whether the device has FP8 tensor/matrix cores (training.dtype fp8 needs them).
  [[nodiscard]] bool has_fp8() const { return peak_fp8_flops.value > 0; }
  /// Sustained fraction of HBM bandwidth of a memory-bound kernel of `family`.
  [[nodiscard]] const Figure& efficiency(MemoryFamily family) const { return this->*efficiency_figure(family); }
  /// The member holding `family`'s efficiency (for code that overrides it: loaders, calibration).
  [[nodiscard]] static Figure DeviceSpec::*efficiency_figure(MemoryFamily family);
};

/// Every built-in device, in a fixed order.
[[nodiscard]] const std::vector<DeviceSpec>& devices();

/// Names of the built-in devices, in the order of devices().
[[nodiscard]] std::vector<std::string> device_names();

/// Names of the built-in devices with FP8 (has_fp8), comma-separated: what an error about fp8 suggests.
[[nodiscard]] std::string fp8_device_names();

/// The device called `name` (exact, case-sensitive match), or nullopt.
[[nodiscard]] std::optional<DeviceSpec> find_device(std::string_view name);

/// Like find_device, but throws InputError(source, field, ...) listing the known names when absent;
/// for callers that read the name from a user's file.
[[nodiscard]] const DeviceSpec& require_device(std::string_view name, const std::string& source,
                                               const std::string& field);

/// The roofline view of a device (what RooflineGpu and GpuModel::spec() expect).
[[nodiscard]] GpuSpec to_gpu_spec(const DeviceSpec& device);

}  // namespace exasim::gpu
