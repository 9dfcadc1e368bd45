#include "sim/flow/event_queue.hpp"

#include <catch2/catch.hpp>

#include <vector>

using exasim::flow::EventQueue;

TEST_CASE("events come out by time, then in insertion order; same-time pushes form a later batch", "[unit]") {
  EventQueue<int> q;
  q.push(2.0, 20);
  q.push(1.0, 10);
  q.push(2.0, 21);
  q.push(1.0, 11);
  std::vector<int> batch;
  REQUIRE(q.next_time() == 1.0);
  CHECK(q.pop_instant(batch) == 1.0);
  CHECK(batch == std::vector<int>{10, 11});
  q.push(1.0, 12);  // pushed while handling t = 1: handled before t = 2
  CHECK(q.pop_instant(batch) == 1.0);
  CHECK(batch == std::vector<int>{12});
  CHECK(q.pop_instant(batch) == 2.0);
  CHECK(batch == std::vector<int>{20, 21});
  CHECK(q.empty());
}
