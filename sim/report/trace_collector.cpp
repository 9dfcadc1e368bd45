#include "sim/report/trace_collector.hpp"

#include <algorithm>

namespace exasim::report {

runtime::OpObserver TraceCollector::observer() {
  return [this](runtime::Rank rank, std::uint32_t op, double t0, double t1) { records_.push_back({rank, op, t0, t1}); };
}

std::vector<trace::TraceRow> TraceCollector::rows() const {
  auto sorted = records_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Record& a, const Record& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.t0 != b.t0) return a.t0 < b.t0;
    return a.op < b.op;
  });
  std::vector<trace::TraceRow> rows;
  rows.reserve(sorted.size());
  for (const auto& rec : sorted) {
    const auto& op = plan_.stream_of(rec.rank).ops[rec.op];
    trace::TraceRow row;
    row.rank = rec.rank;
    row.op = plan_.names[op.name];
    row.t_start_s = rec.t0;
    row.t_end_s = rec.t1;
    switch (op.type) {
      case schedule::OpType::Compute: {
        const auto& k = plan_.kernels[op.kernel];
        row.kind = std::string(gpu::to_string(k.kind));
        row.bytes = k.bytes;
        row.flops = k.flops;
        break;
      }
      case schedule::OpType::CollStart:
        row.kind = std::string(schedule::to_string(op.coll));
        row.dim = plan_.grid.dim(op.dim).name;
        row.bytes = op.bytes;
        break;
      case schedule::OpType::Wait:
        row.kind = "wait";
        row.dim = plan_.grid.dim(op.dim).name;
        row.bytes = op.bytes;
        break;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

trace::GroupOf group_of(const schedule::Plan& plan) {
  return [&grid = plan.grid](std::uint32_t rank, const std::string& dim) {
    for (std::size_t d = 0; d < grid.dims().size(); ++d)
      if (grid.dim(d).name == dim) return grid.group_member(rank, d, 0);
    return rank;
  };
}

}  // namespace exasim::report
