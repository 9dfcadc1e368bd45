#pragma once
// What `exasim simulate` tells the user: throughput as Megatron/AxoNN count it, where the time goes,
// and the communication volume per dimension; as readable text or one JSON object. Also turns the ops a
// runtime observed into trace rows.

#include "sim/runtime/runtime.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/trace.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <memory>

namespace exasim::report {

/// The summary as JSON; keys documented in README.md ("Output").
[[nodiscard]] nlohmann::ordered_json summary_json(const scenario::Scenario& s, const schedule::Plan& plan,
                                          const runtime::RunResult& result);
/// The same, for people.
void print_summary(std::ostream& out, const nlohmann::ordered_json& summary);

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

}  // namespace exasim::report
