#include "sim/flow/internal/radix_queue.hpp"
#include "sim/flow/prediction_heap.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

using exasim::flow::PredictionHeap;
using exasim::flow::RadixQueue;

TEST_CASE("the radix queue pops in key order while keys only rise, and drops dead items", "[unit]") {
  std::mt19937_64 rng(7);
  RadixQueue<int> q;
  std::multiset<std::pair<double, int>> reference;  // live items
  std::set<int> dead;
  double level = 0;
  int next = 0;
  for (int round = 0; round < 20000; ++round) {
    const int action = static_cast<int>(rng() % 4);
    if (action < 2 || reference.empty()) {
      // Keys at or above the level, many of them equal (ties are everywhere in symmetric rings).
      const double key = level + static_cast<double>(rng() % 8) * 0.25 * (rng() % 2 ? 1.0 : 1e-9);
      q.push(key, next);
      reference.insert({key, next});
      ++next;
    } else if (action == 2) {
      const auto victim = std::next(reference.begin(), static_cast<long>(rng() % reference.size()));
      dead.insert(victim->second);
      reference.erase(victim);
    } else {
      int item = -1;
      double key = -1;
      REQUIRE(q.pop(key, item, [&](int i) { return dead.count(i) > 0; }));
      if (dead.count(item)) continue;  // a dead item may still come out of the lowest bucket
      const double least = reference.begin()->first;
      const auto it = std::find_if(reference.begin(), reference.end(), [&](const auto& e) { return e.second == item; });
      REQUIRE(it != reference.end());
      CHECK(it->first == least);  // an item of least key, whichever of the ties
      CHECK(key == it->first);    // and its own key
      level = least;
      reference.erase(it);
    }
  }
  // What is left comes out in order, then nothing.
  int item = -1;
  double key = -1;
  while (q.pop(key, item, [&](int i) { return dead.count(i) > 0; })) {
    if (dead.count(item)) continue;
    const auto it = std::find_if(reference.begin(), reference.end(), [&](const auto& e) { return e.second == item; });
    REQUIRE(it != reference.end());
    CHECK(it->first == reference.begin()->first);
    reference.erase(it);
  }
  CHECK(reference.empty());
}

TEST_CASE("a key pushed below the level comes out next, with its own key, before higher keys", "[unit]") {
  RadixQueue<int> q;
  q.push(2.0, 1);
  q.push(5.0, 2);
  int item = 0;
  double key = 0;
  const auto none = [](int) { return false; };
  REQUIRE(q.pop(key, item, none));
  CHECK(item == 1);
  q.push(2.0 - 1e-15, 3);  // rounding below the level
  REQUIRE(q.pop(key, item, none));
  CHECK(item == 3);
  CHECK(key == 2.0 - 1e-15);  // its own key, not the level
  REQUIRE(q.pop(key, item, none));
  CHECK(item == 2);
  CHECK(key == 5.0);
  CHECK_FALSE(q.pop(key, item, none));
  CHECK(q.empty());
}

TEST_CASE("the prediction heap holds one live end per slot and hands them out in time order", "[unit]") {
  // Many distinct times (a node each), then few (runs of equal ends share buckets, which predictions
  // join, leave, move alone or empty).
  const std::uint32_t distinct_times = GENERATE(1000u, 4u);
  std::mt19937_64 rng(11);
  PredictionHeap heap;
  std::map<std::uint32_t, double> live;
  for (int round = 0; round < 20000; ++round) {
    const auto slot = static_cast<std::uint32_t>(rng() % 300);
    if (rng() % 5 == 0 && !heap.empty()) {
      const double t = heap.next_time();
      const std::uint32_t popped = heap.pop();
      REQUIRE(live.count(popped));
      CHECK(live[popped] == t);
      for (const auto& [s, when] : live) CHECK(when >= t);
      live.erase(popped);
    } else if (rng() % 7 == 0) {
      heap.set(slot, std::numeric_limits<double>::infinity());  // no longer moves
      live.erase(slot);
    } else {
      const double t = static_cast<double>(rng() % distinct_times) * 1e-3;
      heap.set(slot, t);
      live[slot] = t;
    }
    REQUIRE(heap.size() == live.size());
  }
}
