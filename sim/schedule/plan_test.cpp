#include "sim/schedule/plan.hpp"

#include <catch2/catch.hpp>

using namespace exasim::schedule;

TEST_CASE("a Send/Recv partner is (own + peer) modulo the dimension's size", "[unit]") {
  CHECK(p2p_partner_coord(0, 1, 4) == 1);
  CHECK(p2p_partner_coord(3, 1, 4) == 0);   // wraps forward
  CHECK(p2p_partner_coord(0, -1, 4) == 3);  // and backward
  CHECK(p2p_partner_coord(1, -5, 4) == 0);  // offsets beyond the size
  CHECK(p2p_partner_coord(2, 8, 4) == 2);
  // Along one dimension of a grid, every other coordinate kept.
  const ProcessGrid grid({{"x", 2}, {"pipe", 4}});
  Op send;
  send.coll = CollKind::Send;
  send.dim = 1;
  send.peer = -1;
  const Rank r = 1 + 2 * 0;  // x = 1, pipe = 0
  CHECK(p2p_partner(grid, r, send) == 1 + 2 * 3);
}
