#pragma once
// What each emulated rank records about its ops, how rank 0 turns the gathered records into one trace,
// and how files are published so that a partial one never looks complete. No MPI here: the gathering
// itself (MPI_Gatherv of these plain records) is in mpi_runtime.cpp.

#include "sim/runtime/runtime.hpp"
#include "sim/schedule/plan.hpp"
#include "traces/trace.hpp"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace exasim::emu {

/// One timed op of one rank (runtime::ObservedOp: plain data, gathered as bytes): index in the rank's
/// op stream, start and end in seconds from the iteration's barrier-aligned start. For a CollStart the
/// interval is post to completion (as seen by the rank); for a Wait, the time blocked.
using OpRecord = runtime::ObservedOp;

/// Trace rows of the records of all ranks (in any order), sorted as every runtime writes them.
[[nodiscard]] std::vector<trace::TraceRow> rows_of(const schedule::Plan& plan, const std::vector<OpRecord>& records);

/// Writes `path` through `write` into a temporary file beside it, then renames it into place: readers
/// see either no file or the complete one. On failure the temporary is removed and the error rethrown.
void publish_file(const std::string& path, const std::function<void(std::ostream&)>& write);
/// The same for a trace CSV.
void publish_trace_csv(const std::string& path, const std::vector<trace::TraceRow>& rows);

}  // namespace exasim::emu
