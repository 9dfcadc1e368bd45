#include "sim/schedule/internal/pipeline_schedule.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <tuple>

using namespace exasim::schedule;
using Kind = PipelineStep::Kind;

namespace {

struct Counts {
  std::uint32_t send_prev = 0, recv_prev = 0, send_next = 0, recv_next = 0;
};

Counts count_transfers(const std::vector<PipelineStep>& steps) {
  Counts c;
  for (const auto& s : steps) {
    if (s.kind != Kind::Comm) continue;
    c.send_prev += s.send_prev;
    c.recv_prev += s.recv_prev;
    c.send_next += s.send_next;
    c.recv_next += s.recv_next;
  }
  return c;
}

/// Forwards a stage runs before its first backward.
std::uint32_t forwards_before_first_backward(const std::vector<PipelineStep>& steps) {
  std::uint32_t n = 0;
  for (const auto& s : steps) {
    if (s.kind == Kind::Backward) break;
    n += s.kind == Kind::Forward;
  }
  return n;
}

}  // namespace

TEST_CASE("every stage runs each chunk and micro-batch forward once, then backward once", "[unit]") {
  for (auto [p, v, m] : {std::tuple{1u, 1u, 4u}, std::tuple{4u, 1u, 2u}, std::tuple{4u, 1u, 9u}, std::tuple{2u, 2u, 2u},
                         std::tuple{4u, 2u, 8u}, std::tuple{3u, 3u, 6u}, std::tuple{4u, 2u, 4u}}) {
    for (std::uint32_t s = 0; s < p; ++s) {
      INFO("p=" << p << " v=" << v << " m=" << m << " stage " << s);
      std::set<std::pair<std::uint32_t, std::uint32_t>> forwarded, backwarded;
      for (const auto& step : pipeline_schedule(p, v, m, s)) {
        auto key = std::pair{step.chunk, step.micro_batch};
        if (step.kind == Kind::Forward) REQUIRE(forwarded.insert(key).second);
        if (step.kind == Kind::Backward) {
          REQUIRE(forwarded.count(key) == 1);
          REQUIRE(backwarded.insert(key).second);
        }
      }
      CHECK(forwarded.size() == std::size_t{v} * m);
      CHECK(backwarded.size() == std::size_t{v} * m);
    }
  }
}

TEST_CASE("what a stage sends to a neighbour, the neighbour receives", "[unit]") {
  for (auto [p, v, m] : {std::tuple{4u, 1u, 2u}, std::tuple{4u, 1u, 9u}, std::tuple{2u, 2u, 2u}, std::tuple{2u, 2u, 6u},
                         std::tuple{4u, 2u, 8u}, std::tuple{3u, 3u, 6u}, std::tuple{4u, 4u, 4u}}) {
    std::vector<Counts> c;
    for (std::uint32_t s = 0; s < p; ++s) c.push_back(count_transfers(pipeline_schedule(p, v, m, s)));
    for (std::uint32_t s = 0; s < p; ++s) {
      INFO("p=" << p << " v=" << v << " m=" << m << " stage " << s);
      const std::uint32_t next = (s + 1) % p, prev = (s + p - 1) % p;
      CHECK(c[s].send_next == c[next].recv_prev);
      CHECK(c[s].send_prev == c[prev].recv_next);
      // Activations leave every chunk but the model's last; gradients every chunk but the model's first.
      CHECK(c[s].send_next == m * (v - (s + 1 == p ? 1 : 0)));
      CHECK(c[s].send_prev == m * (v - (s == 0 ? 1 : 0)));
    }
  }
}

TEST_CASE("1F1B warms up with p - s - 1 forwards, interleaving with 2(p - s - 1) + (v - 1)p", "[unit]") {
  for (std::uint32_t s = 0; s < 4; ++s) {
    CHECK(forwards_before_first_backward(pipeline_schedule(4, 1, 16, s)) == 4 - s);  // warm-up + the first 1F1B forward
    CHECK(forwards_before_first_backward(pipeline_schedule(4, 2, 16, s)) == 2 * (3 - s) + 4 + 1);
  }
  CHECK(forwards_before_first_backward(pipeline_schedule(4, 1, 2, 0)) == 2);  // fewer micro-batches than stages
  CHECK(forwards_before_first_backward(pipeline_schedule(4, 2, 4, 3)) == 8);  // m == p: all forwards first
}

TEST_CASE("pipeline_schedule rejects what Megatron rejects", "[unit]") {
  CHECK_THROWS_AS(pipeline_schedule(4, 2, 6, 0), std::invalid_argument);
  CHECK_THROWS_AS(pipeline_schedule(4, 1, 8, 4), std::invalid_argument);
}
