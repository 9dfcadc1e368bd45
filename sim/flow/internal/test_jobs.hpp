#pragma once
// Test helpers shared by the flow tests: a small dragonfly whose global links are where flows meet,
// and a job whose ranks sit on a shuffled GPU order, as a spread or random placement puts them.

#include "sim/exec/test_support.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/test_support.hpp"

#include <cstdint>
#include <utility>

namespace exasim::flow::testing {

/// 16 nodes of 4 GPUs and 2 NICs in 4 groups of 4 switches, global links at half the local bandwidth
/// (topologies' small_dragonfly_params()), with wire and switch latencies and a fixed routing seed.
inline topo::Dragonfly small_dragonfly(topo::RoutingPolicy routing) {
  topo::DragonflyParams p = topo::testing::small_dragonfly_params(4, 4, 2, 2, 12.5e9, routing);
  p.local_latency_s = 10e-9;
  p.global_latency_s = 100e-9;
  p.switch_latency_s = 350e-9;
  p.seed = 3;
  return topo::Dragonfly(p);
}

/// A job of `plan` with its ranks on a shuffled GPU order: on small_dragonfly() every ring crosses
/// groups, components tie most flows together and a completion moves many rates (the cascades the
/// local solver exists for).
inline runtime::Job scattered_job(const schedule::Plan& plan) {
  auto job = exec::testing::job_for(plan, 20e-6, 1e-6);
  std::uint64_t state = 11;
  job.gpu_of_rank.resize(plan.grid.world_size());
  for (std::uint32_t r = 0; r < job.gpu_of_rank.size(); ++r) job.gpu_of_rank[r] = r;
  for (std::uint32_t r = static_cast<std::uint32_t>(job.gpu_of_rank.size()) - 1; r > 0; --r) {  // Fisher-Yates
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(job.gpu_of_rank[r], job.gpu_of_rank[(state >> 33) % (r + 1)]);
  }
  return job;
}

}  // namespace exasim::flow::testing
