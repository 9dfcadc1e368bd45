#include "sim/schedule/grid.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using exasim::schedule::ProcessGrid;

TEST_CASE("4D rank layout: x fastest, then y, z, data", "[unit]") {
  ProcessGrid g({{"x", 2}, {"y", 3}, {"z", 2}, {"data", 4}});
  CHECK(g.world_size() == 48);
  // rank = ((d*gz + z)*gy + y)*gx + x
  const exasim::schedule::Rank r = ((3 * 2 + 1) * 3 + 2) * 2 + 1;
  CHECK(g.coord(r, 0) == 1);
  CHECK(g.coord(r, 1) == 2);
  CHECK(g.coord(r, 2) == 1);
  CHECK(g.coord(r, 3) == 3);
  CHECK(g.group_member(r, 1, 0) == r - 2 * 2);   // y stride is gx
  CHECK(g.group_member(r, 3, 0) == r - 3 * 12);  // data stride is gx*gy*gz
  // Group ids are dense and shared exactly by the members of a group.
  for (std::size_t d = 0; d < 4; ++d) {
    std::vector<int> members(g.world_size() / g.dim(d).size, 0);
    for (exasim::schedule::Rank q = 0; q < g.world_size(); ++q) {
      auto id = g.group_id(q, d);
      REQUIRE(id < members.size());
      ++members[id];
      CHECK(g.group_id(g.group_member(q, d, 0), d) == id);
    }
    for (int m : members) CHECK(m == static_cast<int>(g.dim(d).size));
  }
}

TEST_CASE("a nested dimension groups the fastest coordinates of its parent and adds no ranks", "[unit]") {
  // Megatron with context parallelism: tp 2, dp x cp = 3 x 2 (cp fastest), pp 2; cp nested in dp_cp.
  ProcessGrid g({{"tp", 2}, {"dp_cp", 6}, {"pp", 2}});
  const auto cp = g.add_nested("cp", 1, 2);
  CHECK(cp == 3);
  CHECK(g.world_size() == 24);
  CHECK(g.dim(cp).nested);
  CHECK_FALSE(g.dim(1).nested);
  CHECK(g.dim(cp).stride == 2);
  // rank = ((pp*dp + dp_rank)*cp + cp_rank)*tp + tp_rank
  const exasim::schedule::Rank r = ((1 * 3 + 2) * 2 + 1) * 2 + 1;
  CHECK(g.coord(r, 1) == 2 * 2 + 1);
  CHECK(g.coord(r, cp) == 1);
  CHECK(g.group_member(r, cp, 0) == r - 2);
  std::vector<int> members(g.world_size() / 2, 0);
  for (exasim::schedule::Rank q = 0; q < g.world_size(); ++q) {
    const auto id = g.group_id(q, cp);
    REQUIRE(id < members.size());
    ++members[id];
    // A cp group's members share every coordinate but cp: the same tp, dp and pp ranks.
    CHECK(g.coord(g.group_member(q, cp, 0), 0) == g.coord(q, 0));
    CHECK(g.coord(g.group_member(q, cp, 0), 1) / 2 == g.coord(q, 1) / 2);
    CHECK(g.coord(g.group_member(q, cp, 0), 2) == g.coord(q, 2));
  }
  for (int m : members) CHECK(m == 2);
  CHECK_THROWS_AS(g.add_nested("bad", 1, 4), std::logic_error);
  CHECK_THROWS_AS(g.add_nested("bad", cp, 1), std::logic_error);
}
