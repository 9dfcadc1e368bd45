#pragma once
// `exasim calibrate --from-trace`: the rates measured in profiler traces (traces/trace_rates.hpp) as rows
// of the calibration CSV machines read (sim/gpu/internal/calibration.hpp): one GEMM row per shape, an
// elementwise and an attention efficiency row when the trace holds enough of them, one collective row
// per kind, size and group.
//
// LIMITATIONS:
//  - the device comes from the trace's deviceProperties name for the NVIDIA parts exasim knows (A100 by
//    memory size, H100, H200, GH200); others (ROCm reports "AMD Radeon Graphics") need --device;
//  - an efficiency row is written only when the sample stands for real kernels: memory-bound ops moving
//    at least 1 MiB on average, attention of at least 1 GFLOP on average; otherwise the measured rate is
//    a comment line, since tiny kernels measure launch latency rather than bandwidth.

#include <iosfwd>
#include <string>
#include <vector>

namespace exasim::cli {

/// The calibration CSV for `files` (Kineto traces) on `device` (empty: from the traces); InputError for
/// unreadable traces or a device that cannot be named. What was measured is summarised on `log`.
[[nodiscard]] std::string calibration_csv_from_traces(const std::vector<std::string>& files, const std::string& device,
                                                      std::ostream& log);

}  // namespace exasim::cli
