#pragma once
// Measured iterations against a simulated one (`exasim compare`): the mean measured step against the
// simulated iteration, time per kernel class, and collectives matched by kind and size band. A measured
// figure is a mean per step over every step of every file (a file without ProfilerStep annotations
// counts as one step holding all its kernels); the simulated one is one traced rank's iteration.
//
// LIMITATIONS:
//  - classes and collectives are matched in aggregate, not kernel by kernel: exasim's plan has one op
//    per GEMM of the model, the trace whatever the framework launched (fused, split-K, extra copies);
//  - size bands are powers of 16 (< 64 KiB, to 1 MiB, 16 MiB, 256 MiB, more); a collective without size
//    args falls in "unknown";
//  - the side-by-side Chrome trace aligns each measured file's first step (or first kernel) with the
//    simulated iteration's start; clocks of different files are not synchronised.

#include "traces/measured.hpp"
#include "traces/trace.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace exasim::trace {

struct CompareLine {
  std::string name;           ///< class ("gemm") or collective and band ("all_reduce 1MiB-16MiB")
  double measured_s = 0;      ///< per step
  double simulated_s = 0;     ///< per iteration
  double measured_count = 0;  ///< per step (collectives only)
  double simulated_count = 0;
};

struct Comparison {
  std::string scenario;
  std::vector<std::string> measured;  ///< sources, with their rank when known
  std::size_t measured_steps = 0;
  double measured_step_s = 0;  ///< mean ProfilerStep duration (or the kernels' span when there are none)
  double simulated_iteration_s = 0;
  double measured_busy_s = 0;  ///< mean per step of the union of the step's kernels
  double simulated_busy_s = 0;
  std::vector<CompareLine> classes;      ///< the five classes, in KernelClass order
  std::vector<CompareLine> collectives;  ///< (kind, band) present on either side, sorted by name
};

/// Size band label of a collective of `bytes` (-1: "unknown").
[[nodiscard]] std::string size_band(double bytes);

[[nodiscard]] Comparison compare(const std::vector<MeasuredTrace>& measured, const MeasuredTrace& simulated,
                                 double simulated_iteration_s, const std::string& scenario);

[[nodiscard]] nlohmann::json to_json(const Comparison& c);
void print_comparison(std::ostream& out, const Comparison& c);

/// Measured kernels (one process per file, one thread per stream) beside the simulated rows (one process
/// per rank), in the Chrome trace format; throws std::runtime_error when `path` cannot be written.
void write_side_by_side(const std::string& path, const std::vector<MeasuredTrace>& measured,
                        const std::vector<TraceRow>& simulated);

}  // namespace exasim::trace
