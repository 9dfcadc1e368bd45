#include "sim/schedule/grid.hpp"

#include <catch2/catch.hpp>

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
