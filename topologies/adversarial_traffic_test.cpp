// Adversarial traffic on a dragonfly: every GPU of group 0 sends to its counterpart in group 1. Minimal
// routing squeezes all of it through the L global links of that one group pair; adaptive routing must
// spill onto Valiant paths through the other groups and finish much sooner.
//
// Flows run in the fast flow core (max-min sharing). Each flow is routed just before it is added, with
// the flow network as the load view, so adaptive routing sees the flows placed so far - as a switch sees
// the queues that earlier packets built.

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>

#include "sim/flow/flow_network.hpp"
#include "sim/flow/prediction_heap.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"

using namespace exasim::topo;
using exasim::flow::FlowId;
using exasim::flow::FlowNetwork;

namespace {

struct Pair {
  GpuId src, dst;
};

/// Time until the last of `pairs` (one flow of `bytes` each, all starting at 0) has arrived.
double makespan_s(const Topology& t, const std::vector<Pair>& pairs, double bytes) {
  FlowNetwork net(t.links(), exasim::flow::Solver::Local);
  std::vector<LinkId> r;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    r.clear();
    t.route(pairs[i].src, pairs[i].dst, i, &net, r);
    net.add(r, bytes, i);
  }
  exasim::flow::PredictionHeap ends;  // the fast runtime's: one live predicted end per flow
  const auto schedule = [&](double at, FlowId f) { ends.set(f, at); };
  net.resolve(0, schedule);
  double now = 0;
  while (!ends.empty()) {
    now = ends.next_time();
    net.finish(ends.pop());
    net.resolve(now, schedule);
  }
  return now;
}

std::vector<Pair> group_to_next_group(const Topology& t, std::uint32_t gpus_per_group) {
  std::vector<Pair> pairs;
  for (GpuId g = 0; g < gpus_per_group; ++g) pairs.push_back({g, g + gpus_per_group});
  (void)t;
  return pairs;
}

}  // namespace

TEST_CASE("adversarial traffic: adaptive routing spreads a group-to-group burst", "[integration]") {
  // A Frontier-like dragonfly scaled down: 9 groups x 8 switches x 4 endpoints, 2 global links per group
  // pair, nodes of 4 GPUs with 4 NICs; 25 GB/s on every network link.
  DragonflyParams p;
  p.node = {4, 100e9, 1e-6, 4, 25e9, 1e-6};
  p.groups = 9;
  p.switches_per_group = 8;
  p.endpoints_per_switch = 4;
  p.global_links_per_group_pair = 2;
  p.local_bandwidth_Bps = 25e9;
  p.global_bandwidth_Bps = 25e9;
  const std::uint32_t per_group = 8 * 4;  // 8 nodes x 4 GPUs
  const double bytes = 1e9;

  p.routing = RoutingPolicy::Minimal;
  const Dragonfly minimal(p);
  p.routing = RoutingPolicy::Adaptive;
  const Dragonfly adaptive(p);
  const auto pairs = group_to_next_group(minimal, per_group);

  const double t_min = makespan_s(minimal, pairs, bytes);
  const double t_ada = makespan_s(adaptive, pairs, bytes);
  WARN("group-to-group burst, " << pairs.size() << " flows of 1 GB: minimal " << t_min << " s, adaptive " << t_ada
                                << " s (" << t_min / t_ada << "x)");
  // Minimal: 32 flows share the pair's 2 global links, 16 per link at 25/16 GB/s.
  CHECK(t_min == Approx(16 * bytes / 25e9));
  CHECK(t_ada * 2 <= t_min);
}

TEST_CASE("adversarial traffic: Frontier-sized dragonfly", "[integration]") {
  DragonflyParams p;
  p.node = {8, 0, 1e-6, 4, 25e9, 1e-6, GpuLinkLayout::FrontierMi250x};
  p.groups = 74;
  p.switches_per_group = 32;
  p.endpoints_per_switch = 16;
  p.global_links_per_group_pair = 4;
  p.local_bandwidth_Bps = 25e9;
  p.global_bandwidth_Bps = 25e9;
  p.routing = RoutingPolicy::Minimal;
  const Dragonfly minimal(p);
  p.routing = RoutingPolicy::Adaptive;
  const Dragonfly adaptive(p);
  const auto pairs = group_to_next_group(minimal, 128 * 8);
  const auto start = std::chrono::steady_clock::now();
  const double t_min = makespan_s(minimal, pairs, 1e9);
  const double t_ada = makespan_s(adaptive, pairs, 1e9);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("Frontier group 0 -> group 1, 1024 GCDs x 1 GB: minimal "
       << t_min << " s, adaptive " << t_ada << " s (" << t_min / t_ada << "x); simulated in " << wall << " s");
  CHECK(t_min >= Approx(256 * 1e9 / 25e9));  // 1024 flows over 4 global links, hashed: not quite evenly
  CHECK(t_ada * 2 <= t_min);
}

TEST_CASE("adversarial traffic: adaptive fat tree beats ECMP under hash collisions", "[integration]") {
  // 2 levels, 4 leaves x 8 endpoints, 8 spines, full bisection: one flow per NIC from leaf 0 to leaf 1.
  // ECMP lets some spines get 2 or more flows by chance; least-loaded up-links give each its own.
  FatTreeParams p;
  p.node = {1, 0, 0, 1, 25e9, 1e-6};
  p.leaves_per_pod = 4;
  p.spines_per_pod = 8;
  p.endpoints_per_leaf = 8;
  p.leaf_spine_bandwidth_Bps = 25e9;
  p.routing = RoutingPolicy::Minimal;
  const FatTree ecmp(p);
  p.routing = RoutingPolicy::Adaptive;
  const FatTree adaptive(p);
  const auto pairs = group_to_next_group(ecmp, 8);
  const double t_ecmp = makespan_s(ecmp, pairs, 1e9);
  const double t_ada = makespan_s(adaptive, pairs, 1e9);
  WARN("fat tree leaf 0 -> leaf 1: ECMP " << t_ecmp << " s, adaptive " << t_ada << " s");
  CHECK(t_ada == Approx(1e9 / 25e9));
  CHECK(t_ecmp > t_ada);
}
