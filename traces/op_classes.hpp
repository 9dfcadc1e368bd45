#pragma once
// A trace's time per op class, the unit in which `exasim validate` compares a measured trace with a
// simulated one: "compute" (every kernel); "<kind>.<dim>" for each collective kind per grid dimension
// (e.g. "all_reduce.x"); "exposed_comm" (time blocked in waits). Each class is the mean over the trace's
// ranks of the summed durations, so traces of the same plan compare like for like.
//
// A collective's class runs from each member's own post to its completion, as a profiler shows it. A
// group collective cannot start before its last member posts it; given each row's group (GroupOf), the
// time members had posted before their group's last post is reported as "post_skew.<dim>", the part of
// the collective classes that is the members reaching the collective apart rather than the collective
// itself (on the emulation host, mostly host jitter: docs/accuracy.md). Skew is a diagnostic, not an
// op's time: it overlaps the collective classes, and the part of it a member spent blocked is in
// exposed_comm too. A trace read from a CSV has no grid, hence no groups and no skew.
//
// LIMITATIONS:
//  - A member that posts early counts the wait for its late peers as collective time; the skew says how
//    much, but the classes compared keep it (counting from the last post on both sides was measured
//    worse: docs/accuracy.md).
//  - Members' k-th posts of the same op name along the same dimension are one collective (members post
//    in the same order: sim/schedule/plan.hpp); a traced subset of ranks takes the last post among the
//    members it has.
//  - Send and recv have no post skew: a transfer's pair is not matched.
//  - Posts compare across ranks only on one clock: the emulator's ranks on several hosts keep their own
//    zero (emu/mpi_runtime.cpp), and there the skew is as good as those zeros agree.
//  - Collective classes overlap compute; the classes do not add up to the iteration.

#include "traces/trace.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::trace {

/// The same id for every member of `rank`'s group along the grid dimension named `dim` (a runtime's
/// grid gives it: report::group_of).
using GroupOf = std::function<std::uint32_t(std::uint32_t rank, const std::string& dim)>;

/// Mean over ranks of the summed duration per class (see above); a class none of the rows has is absent.
[[nodiscard]] std::map<std::string, double> op_class_times(const std::vector<TraceRow>& rows,
                                                           const GroupOf& group_of = {});

/// Whether a class of op_class_times() is a post skew ("post_skew.<dim>"), a diagnostic rather than an
/// op's time.
[[nodiscard]] bool is_post_skew(std::string_view op_class);

}  // namespace exasim::trace
