#pragma once
// One row per executed op per rank, the schema every runtime writes (traces/SCHEMA.md), and its CSV and
// Chrome-trace (Perfetto) forms. The CSV is read back with fast-cpp-csv-parser so that measured traces
// and simulated ones load the same way.

#include <cstdint>
#include <string>
#include <vector>

namespace exasim::trace {

struct TraceRow {
  std::uint32_t rank = 0;
  std::string op;    ///< op name in the plan, e.g. "L3.qkv.fwd.gemm"
  std::string kind;  ///< gemm | attention | memory | all_reduce | all_gather | reduce_scatter | wait
  std::string dim;   ///< grid dimension of a collective or wait ("x", "data", ...); empty for compute
  double bytes = 0;  ///< collective: buffer size S; compute: HBM bytes moved
  double flops = 0;  ///< compute only
  double t_start_s = 0;
  double t_end_s = 0;
};

/// Writes the CSV with its header; throws std::runtime_error when the file cannot be written.
void write_csv(const std::string& path, const std::vector<TraceRow>& rows);
/// Reads a trace CSV; a missing file, a bad header or a malformed row is an InputError naming the file
/// and the line.
[[nodiscard]] std::vector<TraceRow> read_csv(const std::string& path);
/// Chrome trace event format ("X" events, one track per rank, grouped by node); opens in Perfetto.
void write_chrome_json(const std::string& path, const std::vector<TraceRow>& rows, std::uint32_t gpus_per_node);

}  // namespace exasim::trace
