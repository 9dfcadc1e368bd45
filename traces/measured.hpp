#pragma once
// A measured trace, reduced to what exasim compares and calibrates with: the GPU kernels (times, stream,
// class, collective kind and size), the ProfilerStep#N iterations, the CPU launch time of each kernel,
// and the shapes of the ops that launched GEMM and memory-bound kernels. Read from the PyTorch
// profiler's Kineto Chrome-trace JSON (plain or gzipped) with a SAX pass, so a trace of hundreds of MB
// never sits in memory as a DOM; exasim's own trace.csv (traces/SCHEMA.md) reads into the same struct,
// one per rank, so a simulated iteration is summarised by the same code.
//
// LIMITATIONS:
//  - Kineto only: Nsight Systems, rocprof and Chakra traces are not read;
//  - one GPU per file (the first deviceProperties entry names it); kernels of other devices in the same
//    file are summarised together;
//  - steps are the CPU-side ProfilerStep#N annotations; a trace recorded without torch.profiler's
//    schedule has none, and kernels are then not split by step;
//  - collective sizes come from the kernel args NCCL/RCCL record in recent PyTorch (`In msg nelems`,
//    `Out msg nelems`, `dtype`); older traces give kinds and times only;
//  - shapes come from `Input Dims` (record_shapes=True), for aten::mm, addmm, bmm, baddbmm and the
//    memory-bound ops' tensors; a kernel is linked to the innermost op through its `External id`.

#include "traces/kernel_class.hpp"
#include "traces/trace.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace exasim::trace {

/// One GPU kernel. Times are microseconds on the trace's clock (Kineto's unit).
struct DeviceKernel {
  double start_us = 0;
  double dur_us = 0;
  std::int64_t stream = 0;
  KernelClass cls = KernelClass::Other;
  CollectiveKind coll = CollectiveKind::Other;  ///< collectives only
  double bytes = -1;                            ///< collectives: buffer size S (SCHEMA.md); -1 unknown
  int group_size = 0;                           ///< collectives: ranks in the group; 0 unknown
  std::int64_t correlation = -1;                ///< link to the CPU launch (cudaLaunchKernel / hipLaunchKernel)
  std::int64_t external_id = -1;                ///< link to the CPU op that launched it
  std::uint32_t name = 0;                       ///< index into MeasuredTrace::names
};

struct MeasuredStep {
  std::string name;  ///< "ProfilerStep#4"; "iteration" for exasim's own traces
  double start_us = 0;
  double dur_us = 0;
};

/// The shape of a CPU op (record_shapes): GEMM dimensions for aten::mm/addmm/bmm/baddbmm, the bytes of
/// its tensor inputs for the others.
struct OpShape {
  std::string op;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;  ///< GEMM ops only (0 otherwise)
  std::string dtype;                            ///< the first input's type ("float", "c10::BFloat16")
  double input_bytes = 0;                       ///< sum over tensor inputs of elements x dtype size
  double largest_input_bytes = 0;               ///< the largest of them
  std::vector<std::int64_t> first_dims;         ///< the first input's dims (attention: query [B, H, L, E])
};

struct MeasuredTrace {
  std::string source;  ///< file name
  std::string device;  ///< deviceProperties[0].name; "exasim simulation" for exasim traces
  double device_memory_bytes = 0;
  int rank = -1;  ///< distributedInfo.rank; -1 unknown
  int world_size = 0;
  std::vector<MeasuredStep> steps;
  std::vector<DeviceKernel> kernels;  ///< in file order
  std::vector<std::string> names;     ///< kernel names, interned
  std::size_t copies = 0;             ///< gpu_memcpy and gpu_memset events (not kernels)
  double copy_time_us = 0;
  std::unordered_map<std::int64_t, double> launch_us;   ///< correlation -> CPU launch time
  std::unordered_map<std::int64_t, OpShape> op_shapes;  ///< External id -> shape (ops with Input Dims)
  [[nodiscard]] const std::string& name_of(const DeviceKernel& k) const { return names[k.name]; }
};

/// Reads a Kineto trace (JSON, gzipped or not: detected from the content). InputError(path, field, ...)
/// naming the field and what is allowed for anything that is not one: not JSON, truncated, not an object
/// with a traceEvents array, an event field of the wrong type, no GPU kernels.
[[nodiscard]] MeasuredTrace read_kineto(const std::string& path);

/// exasim's trace rows of one rank as a measured trace: compute rows are kernels on stream 0, collectives
/// and point-to-point transfers on stream 1 (their post-to-completion span), waits are dropped; one step
/// "iteration" from 0 to the rank's last end.
[[nodiscard]] MeasuredTrace from_trace_rows(const std::vector<TraceRow>& rows, std::uint32_t rank,
                                            const std::string& source);

/// A measured-trace file of any kind exasim reads: a `.csv` is exasim's trace.csv (one MeasuredTrace per
/// rank in it), anything else a Kineto trace.
[[nodiscard]] std::vector<MeasuredTrace> read_measured(const std::string& path);

}  // namespace exasim::trace
