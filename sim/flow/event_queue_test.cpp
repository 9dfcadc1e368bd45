#include "sim/flow/internal/event_queue.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <vector>

using exasim::flow::EventQueue;

TEST_CASE("events come out by time, then in insertion order, and same-time pushes form a later batch", "[unit]") {
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

TEST_CASE("the time index agrees with a map through many inserts and removals", "[unit]") {
  exasim::flow::TimeIndex index;
  std::map<double, std::uint32_t> reference;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 20000; ++step) {
    // Few distinct times (0.0 .. 0.299): many collisions, long probe runs, removals inside runs.
    const double t = static_cast<double>(rng() % 300) / 1000.0;
    if (reference.count(t) != 0 && rng() % 2 == 0) {
      CHECK(index.take(t) == reference[t]);
      reference.erase(t);
    } else {
      std::uint32_t& v = index.find_or_add(t, 0xffffffff);
      if (reference.count(t) == 0) {
        REQUIRE(v == 0xffffffff);
        v = static_cast<std::uint32_t>(step);
        reference[t] = v;
      } else {
        REQUIRE(v == reference[t]);
      }
    }
  }
  for (const auto& [t, v] : reference) CHECK(index.take(t) == v);
}
