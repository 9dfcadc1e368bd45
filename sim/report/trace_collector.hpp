#pragma once
// Turns the ops a runtime observed into trace rows (traces/trace.hpp: trace.csv, Perfetto's trace.json).

#include "sim/runtime/runtime.hpp"
#include "sim/schedule/plan.hpp"
#include "traces/op_classes.hpp"
#include "traces/trace.hpp"

#include <vector>

namespace exasim::report {

/// Collects observed ops into trace rows (thread-compatible with one runtime at a time).
class TraceCollector {
 public:
  explicit TraceCollector(const schedule::Plan& plan) : plan_(plan) {}
  [[nodiscard]] runtime::OpObserver observer();
  /// Rows sorted by rank, then start time, then op order: deterministic.
  [[nodiscard]] std::vector<trace::TraceRow> rows() const;

 private:
  struct Record {
    runtime::Rank rank;
    std::uint32_t op;
    double t0, t1;
  };
  const schedule::Plan& plan_;
  std::vector<Record> records_;
};

/// A collective row's group for trace::op_class_times(): the first member's rank of the rank's group along
/// the named dimension of the plan's grid (the plan must outlive the function). A name the grid does not
/// have is a group of its own per rank.
[[nodiscard]] trace::GroupOf group_of(const schedule::Plan& plan);

}  // namespace exasim::report
