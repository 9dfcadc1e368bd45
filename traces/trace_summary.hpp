#pragma once
// What `exasim trace summarize` reports of a measured (or simulated) trace: the steps, the kernels,
// their summed and overlapped (busy) time, seconds per kernel class, the collectives by kind, and the
// communication no compute hid. Definitions (docs/traces.md):
//  - kernel_time_s: sum of kernel durations, over all streams;
//  - gpu_busy_s: length of the union of kernel intervals over all streams;
//  - classes: kernel time per class (kernel_class.hpp), so they add up to kernel_time_s;
//  - exposed_comm_s: length of the union of collective kernels minus the union of all other kernels
//    (collective time during which no compute or memory kernel ran on any stream);
//  - a step's figures count the kernels launched inside it (the CPU launch of the kernel, found by its
//    correlation id, falls inside the ProfilerStep; without a launch event, the kernel's own start).
//
// LIMITATIONS:
//  - memcpy/memset are counted apart (copies), not as kernels, and do not make the GPU busy;
//  - exposed communication is per GPU: a collective that waits for a slow peer counts as exposed, as on
//    the real GPU, but the trace cannot say why.

#include "traces/kernel_class.hpp"
#include "traces/measured.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace exasim::trace {

using ClassSeconds = std::array<double, kKernelClasses>;  ///< indexed by KernelClass

struct CollectiveStats {
  std::uint64_t count = 0;
  double time_s = 0;
  double bytes = 0;               ///< summed over the kernels whose args give a size
  std::uint64_t sized_count = 0;  ///< how many of them did
};

struct StepSummary {
  std::string name;
  double duration_s = 0;
  std::uint64_t kernels = 0;
  double kernel_time_s = 0;
  ClassSeconds classes{};
};

struct TraceSummary {
  std::string source;
  std::string device;
  int rank = -1;
  std::vector<StepSummary> steps;
  std::uint64_t kernels = 0;
  double kernel_time_s = 0;
  double gpu_busy_s = 0;
  ClassSeconds classes{};
  std::array<CollectiveStats, kCollectiveKinds> collectives{};  ///< indexed by CollectiveKind
  double exposed_comm_s = 0;
  std::uint64_t copies = 0;
  double copy_time_s = 0;
};

[[nodiscard]] TraceSummary summarize(const MeasuredTrace& trace);
/// Sum over files (steps left out; busy and exposed times add, as the GPUs are distinct).
[[nodiscard]] TraceSummary total(const std::vector<TraceSummary>& summaries);

/// Length of the union of [start, start + dur) intervals (any order; microseconds in, microseconds out).
[[nodiscard]] double union_length_us(std::vector<std::pair<double, double>> intervals);
/// Length of union(a) minus union(b).
[[nodiscard]] double uncovered_length_us(std::vector<std::pair<double, double>> a,
                                         std::vector<std::pair<double, double>> b);

/// Index of the step a kernel belongs to (see above), or -1.
[[nodiscard]] int step_of(const MeasuredTrace& trace, const DeviceKernel& kernel);

[[nodiscard]] nlohmann::json to_json(const TraceSummary& s);
void print_summary(std::ostream& out, const TraceSummary& s);

}  // namespace exasim::trace
