#pragma once
// A trace's time per op class, the unit in which `exasim validate` compares a measured trace with a
// simulated one: "compute" (every kernel); "<kind>.<dim>" for each collective kind per grid dimension
// (e.g. "all_reduce.x"); "exposed_comm" (time blocked in waits). Each class is the mean over the trace's
// ranks of the summed durations, so traces of the same plan compare like for like.
//
// A group collective cannot start before its last member posts it. Given each row's group (GroupOf), a
// collective's class runs from that last post to the member's completion, the time the collective
// model predicts; what a member spent posted before its group's last post is its post skew,
// "post_skew.<dim>", reported beside the op classes. Skew is not an op's time: it is how far apart the
// members reached the collective, which on the emulation host is mostly host jitter (docs/accuracy.md),
// and the part of it a member spent blocked is already in exposed_comm. Without groups (a trace read
// from a CSV, which has no grid) a collective's class runs from each member's own post.
//
// LIMITATIONS:
//  - Members' k-th posts of the same op name along the same dimension are one collective (members post
//    in the same order: sim/schedule/plan.hpp); a traced subset of ranks takes the last post among the
//    members it has.
//  - Send and recv run from their own post: a transfer's pair is not matched.
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

/// Whether a class of op_class_times() is a post skew ("post_skew.<dim>") rather than an op's time.
[[nodiscard]] bool is_post_skew(std::string_view op_class);

}  // namespace exasim::trace
