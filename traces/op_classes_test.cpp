#include "traces/op_classes.hpp"

#include <catch2/catch.hpp>

using namespace exasim;

TEST_CASE("op class times are sums per class, averaged over the trace's ranks", "[unit]") {
  const std::vector<trace::TraceRow> rows = {
      {0, "a.gemm", "gemm", "", 0, 1, 0.0, 1.0},   {1, "a.gemm", "gemm", "", 0, 1, 0.0, 3.0},
      {1, "a.norm", "memory", "", 8, 0, 3.0, 3.5}, {0, "a.ar", "all_reduce", "x", 8, 0, 1.0, 2.0},
      {0, "a.ar", "wait", "x", 8, 0, 1.5, 2.0},    {1, "a.ag", "all_gather", "y", 8, 0, 3.0, 3.5}};
  const auto times = trace::op_class_times(rows);
  REQUIRE(times.size() == 4);
  CHECK(times.at("compute") == Approx((1.0 + 3.0 + 0.5) / 2));
  CHECK(times.at("all_reduce.x") == Approx(0.5));  // one rank's 1 s over two ranks
  CHECK(times.at("all_gather.y") == Approx(0.25));
  CHECK(times.at("exposed_comm") == Approx(0.25));
  CHECK(trace::op_class_times({}).empty());
}

TEST_CASE("with groups, the time members posted before their group's last post is the post skew", "[unit]") {
  // Ranks 0 and 1 form one x group, 2 and 3 another. Each group all-reduces "g.ar" twice; rank 0 posts
  // the first 0.3 s before rank 1, rank 3 the second 0.2 s before rank 2.
  const std::vector<trace::TraceRow> rows = {
      {0, "g.ar", "all_reduce", "x", 8, 0, 0.0, 1.0}, {1, "g.ar", "all_reduce", "x", 8, 0, 0.3, 1.0},
      {2, "g.ar", "all_reduce", "x", 8, 0, 0.0, 1.0}, {3, "g.ar", "all_reduce", "x", 8, 0, 0.0, 1.0},
      {0, "g.ar", "all_reduce", "x", 8, 0, 2.0, 2.5}, {1, "g.ar", "all_reduce", "x", 8, 0, 2.0, 2.5},
      {2, "g.ar", "all_reduce", "x", 8, 0, 2.2, 2.5}, {3, "g.ar", "all_reduce", "x", 8, 0, 2.0, 2.5},
      {0, "g.ar", "wait", "x", 8, 0, 0.5, 1.0},       {1, "p.send", "send", "pp", 8, 0, 3.0, 3.4},
      {0, "p.recv", "recv", "pp", 8, 0, 3.2, 3.4}};
  const trace::GroupOf by_pair = [](std::uint32_t rank, const std::string&) { return rank / 2; };
  const auto times = trace::op_class_times(rows, by_pair);
  CHECK(times.at("post_skew.x") == Approx((0.3 + 0.2) / 4));
  // The op classes are the same with and without groups: each member's own post to its completion.
  const auto plain = trace::op_class_times(rows);
  CHECK(times.at("all_reduce.x") == Approx((1.0 + 0.7 + 1.0 + 1.0 + 0.5 * 3 + 0.3) / 4));
  for (const auto& [name, seconds] : plain) CHECK(times.at(name) == Approx(seconds));
  CHECK(times.size() == plain.size() + 1);
  CHECK(plain.count("post_skew.x") == 0);
  CHECK(times.count("post_skew.pp") == 0);  // transfers are not matched
  CHECK(trace::is_post_skew("post_skew.x"));
  CHECK_FALSE(trace::is_post_skew("all_reduce.x"));
}

TEST_CASE("the same op posted twice by a group is two collectives, matched in post order", "[unit]") {
  // Rows out of time order: the k-th post of each member is matched, not the k-th row.
  const std::vector<trace::TraceRow> rows = {{0, "ar", "all_reduce", "y", 8, 0, 5.0, 6.0},
                                             {0, "ar", "all_reduce", "y", 8, 0, 0.0, 1.0},
                                             {1, "ar", "all_reduce", "y", 8, 0, 0.5, 1.0},
                                             {1, "ar", "all_reduce", "y", 8, 0, 5.5, 6.0}};
  const auto times = trace::op_class_times(rows, [](std::uint32_t, const std::string&) { return 0u; });
  CHECK(times.at("post_skew.y") == Approx((0.5 + 0.5) / 2));
  // Matched by row order instead, rank 0's first row (posted at 5.0) would pair with rank 1's at 0.5.
  CHECK(times.at("all_reduce.y") == Approx((1.0 + 1.0 + 0.5 + 0.5) / 2));
}
