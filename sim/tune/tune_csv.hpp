#pragma once
// tune.csv (`exasim tune --out`), written by the command and read back by `exasim report`: one row per
// configuration that fits, in the analytic order, with its estimate and, for the simulated ones, the
// simulation's figures. Its configuration columns are the schemes' own (scenario::Scheme::csv_columns):
//  - one scheme searched that keeps the scenario's recompute (axonn4d): that scheme's columns alone;
//  - else "scheme", every scheme's columns in table order (empty where they do not apply; a column
//    several schemes name, as Megatron's and FSDP's micro_batch, is one column), "recompute".
// Then analytic_iteration_s, memory_per_gpu_bytes, iteration_time_s, percent_of_peak, tflops_per_gpu,
// mfu_percent (the last four empty when not simulated; mfu_percent is the model FLOPs utilization, the
// model's flops without recomputation over the peak). The reader finds every cell by its column's name,
// so it takes the columns in any order, a table of every scheme written before a scheme joined the table
// (without that scheme's columns), and a table without mfu_percent (written before the column was; its
// rows read back with mfu_percent unknown).
//
// LIMITATIONS: a configuration's switches that tune does not search are not written (they read back as
// the scheme's defaults); numbers are written as JSON writes them (shortest round trip).

#include "sim/tune/search.hpp"

#include <optional>
#include <string>
#include <vector>

namespace exasim::tune {

/// What the simulation of one configuration gave.
struct SimulatedFigures {
  double iteration_time_s = 0;
  double percent_of_peak = 0;
  double tflops_per_gpu = 0;
  double mfu_percent = -1;  ///< model FLOPs utilization; -1: unknown (a tune.csv without the column)
};

struct TuneRow {
  Candidate candidate;                        ///< its scheme, config, recompute, estimate and memory
  std::optional<SimulatedFigures> simulated;  ///< absent: not simulated
};

/// The scheme whose columns a search of `searched` (nullptr: every scheme) writes alone, or nullptr
/// when the table has every scheme's columns.
[[nodiscard]] const scenario::Scheme* scheme_alone(const scenario::Scheme* searched);

/// The configuration as tune prints it in a table of `alone` (scheme_alone): the scheme's label, with
/// its name in front when the table mixes schemes.
[[nodiscard]] std::string row_label(const Candidate& c, const scenario::Scheme* alone);

/// The file's text.
[[nodiscard]] std::string write_tune_csv(const scenario::Scheme* alone, const std::vector<TuneRow>& rows);

struct TuneCsv {
  const scenario::Scheme* alone = nullptr;  ///< as scheme_alone: the scheme of a single-scheme table
  std::vector<TuneRow> rows;
};

/// Reads a tune.csv; InputError naming the file, line or row and column on a header that is neither
/// layout, a row of the wrong width, an unknown scheme or a cell that does not parse.
[[nodiscard]] TuneCsv read_tune_csv(const std::string& path);

}  // namespace exasim::tune
