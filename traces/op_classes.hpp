#pragma once
// A trace's time per op class, the unit in which `exasim validate` compares a measured trace with a
// simulated one: "compute" (every kernel); "<kind>.<dim>" for each collective kind per grid dimension
// (post to completion, e.g. "all_reduce.x"); "exposed_comm" (time blocked in waits). Each class is the
// mean over the trace's ranks of the summed durations, so traces of the same plan compare like for like.
//
// LIMITATIONS:
//  - A collective's class runs from each rank's own post: a member that posts early counts the wait for
//    its late peers as collective time (on one host that is host jitter, docs/accuracy.md).
//  - Collective classes overlap compute; the classes do not add up to the iteration.

#include "traces/trace.hpp"

#include <map>
#include <string>
#include <vector>

namespace exasim::trace {

/// Mean over ranks of the summed duration per class (see above); a class none of the rows has is absent.
[[nodiscard]] std::map<std::string, double> op_class_times(const std::vector<TraceRow>& rows);

}  // namespace exasim::trace
