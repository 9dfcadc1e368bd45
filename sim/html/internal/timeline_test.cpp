#include "sim/html/internal/timeline.hpp"

#include <catch2/catch.hpp>

namespace {

using exasim::html::internal::build_timeline;
using exasim::trace::TraceRow;

TraceRow row(std::uint32_t rank, const std::string& op, const std::string& kind, const std::string& dim, double t0,
             double t1) {
  return {rank, op, kind, dim, 0, 0, t0, t1};
}

/// "g7": built by appends (GCC 12 warns, wrongly, on "g" + std::to_string(i) under -O2 -Werror).
std::string op_name(char prefix, int i) {
  std::string name(1, prefix);
  name += std::to_string(i);
  return name;
}

}  // namespace

TEST_CASE("timeline: compute and waits in the work lane, collectives in sub-lanes", "[unit]") {
  const std::vector<TraceRow> rows = {
      row(0, "a.gemm", "gemm", "", 0, 1),        row(0, "ar", "all_reduce", "x", 0.5, 2),
      row(0, "ag", "all_gather", "z", 0.6, 0.9), row(0, "ar", "wait", "x", 1, 2),
      row(0, "noop", "wait", "z", 2, 2),  // a zero wait: nothing to draw
      row(3, "b.gemm", "gemm", "", 0, 3),
  };
  const auto t = build_timeline(rows, 4.0, 1000, 16);
  REQUIRE(t.ranks.size() == 2);
  CHECK(t.end_s == 4.0);
  CHECK(t.rows == 6);
  CHECK(t.reduction_step == 0);
  const auto& r0 = t.ranks[0];
  REQUIRE(r0.work.size() == 2);  // the gemm and the x wait; the zero-length z wait is dropped
  CHECK(r0.work[1].key == "wait:x");
  REQUIRE(r0.comm.size() == 2);
  // The z all-gather starts while the x all-reduce is in flight: a second sub-lane.
  CHECK(r0.comm[0].sublane == 0);
  CHECK(r0.comm[1].sublane == 1);
  CHECK(r0.comm_sublanes == 2);
  CHECK(t.dims == std::vector<std::string>{"x", "z"});
  CHECK(t.ranks[1].rank == 3);
}

TEST_CASE("timeline: over the budget, same-kind neighbours merge, then the longest are kept", "[unit]") {
  std::vector<TraceRow> rows;
  // 200 back-to-back gemms and 200 memory kernels alternating: 400 rows, 50-block budget (the floor).
  for (int i = 0; i < 200; ++i) {
    rows.push_back(row(0, op_name('g', i), "gemm", "", 2.0 * i, 2.0 * i + 1));
    rows.push_back(row(0, op_name('m', i), "memory", "", 2.0 * i + 1, 2.0 * i + 2));
  }
  const auto t = build_timeline(rows, 400, 10, 16);
  // Step 1 cannot merge (kinds alternate), step 2 merges the kinds: one block of 400 ops.
  CHECK(t.reduction_step == 2);
  REQUIRE(t.ranks[0].work.size() == 1);
  CHECK(t.ranks[0].work[0].count == 400);
  CHECK(t.ranks[0].work[0].first == "g0");
  CHECK(t.ranks[0].work[0].last == "m199");

  // Waits of alternating dimensions between computes never merge by kind: spans are coarsened instead,
  // each coloured by its main kind, with no gap opened where there was none.
  rows.clear();
  for (int i = 0; i < 100; ++i) {
    rows.push_back(row(0, "g", "gemm", "", 3.0 * i, 3.0 * i + 2));
    rows.push_back(row(0, "w", "wait", i % 2 ? "x" : "y", 3.0 * i + 2, 3.0 * i + 3));
  }
  rows.push_back(row(0, "late", "gemm", "", 310, 311));  // after 10 s idle: stays apart
  const auto coarse = build_timeline(rows, 311, 10, 16);
  CHECK(coarse.reduction_step == 3);
  CHECK(coarse.blocks <= 50);
  const auto& work = coarse.ranks[0].work;
  REQUIRE(work.size() >= 2);
  CHECK(work.front().t0 == 0);
  for (std::size_t i = 1; i + 1 < work.size(); ++i) CHECK(work[i].t0 == work[i - 1].t1);  // contiguous
  CHECK(work[work.size() - 2].t1 == 300);
  CHECK(work.back().t0 == 310);  // the idle gap is kept
  // Compute holds 2/3 of every span of whole gemm+wait pairs.
  CHECK(work.front().key == "compute");
  CHECK(work.front().mostly == Approx(2.0 / 3).margin(0.1));
}

TEST_CASE("timeline: at most max_ranks ranks, the first by number", "[unit]") {
  std::vector<TraceRow> rows;
  for (std::uint32_t r = 0; r < 5; ++r) rows.push_back(row(4 - r, "g", "gemm", "", 0, 1));
  const auto t = build_timeline(rows, 0, 1000, 3);
  CHECK(t.ranks_in_trace == 5);
  REQUIRE(t.ranks.size() == 3);
  CHECK(t.ranks[2].rank == 2);
  CHECK(t.end_s == 1.0);  // no iteration time given: the last row's end
}
