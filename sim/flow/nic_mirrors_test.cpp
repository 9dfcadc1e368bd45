#include "sim/flow/nic_mirrors.hpp"
#include "sim/exec/test_support.hpp"
#include "sim/flow/fast_runtime.hpp"
#include "sim/flow/internal/test_jobs.hpp"

#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/megatron.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace exasim;
using exec::testing::job_for;
using flow::testing::scattered_job;
using flow::testing::small_dragonfly;

namespace {

schedule::Plan axonn_plan() {
  const schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  return schedule::build_axonn4d_plan(model, {2, 2, 4, 4}, {64, schedule::Recompute::Full}, {true, true, true, true});
}

/// Whether NIC k of `node` is among the pairs.
bool mirrored(const topo::Topology& topology, const std::vector<std::pair<topo::LinkId, topo::LinkId>>& pairs,
              std::uint32_t node, std::uint32_t k) {
  const std::uint32_t nic = node * topology.nics_per_node() + k;
  return std::any_of(pairs.begin(), pairs.end(), [&](const auto& pair) {
    return topology.link_ends(pair.first).from == topo::Vertex{topo::VertexKind::Nic, nic};
  });
}

}  // namespace

TEST_CASE("a packed 4D job mirrors every NIC, each pair a NIC's up and down link", "[unit]") {
  // x and y groups stay inside a node (no NIC), z and data groups have one member a node.
  const auto topology = small_dragonfly(topo::RoutingPolicy::Adaptive);
  const auto plan = axonn_plan();
  const auto pairs = flow::mirrored_nic_pairs(topology, job_for(plan, 20e-6));
  REQUIRE(pairs.size() == topology.node_count() * topology.nics_per_node());
  for (const auto& [up, down] : pairs) {
    CHECK(topology.links()[up].cls == topo::LinkClass::NicUp);
    CHECK(topology.links()[down].cls == topo::LinkClass::NicDown);
    CHECK(topology.link_ends(up).from == topology.link_ends(down).to);  // one NIC
    CHECK(topology.links()[up].bandwidth_Bps == topology.links()[down].bandwidth_Bps);
  }
}

TEST_CASE("a job whose collectives run as single hops (direct) mirrors no NIC", "[unit]") {
  // Direct's bundles are one hop each: a member's NIC carries its sends up, others' sends down.
  const auto topology = small_dragonfly(topo::RoutingPolicy::Adaptive);
  const auto plan = axonn_plan();
  auto job = job_for(plan, 20e-6);
  job.collective_algorithm = collectives::Algorithm::Direct;
  CHECK(flow::mirrored_nic_pairs(topology, job).empty());
  // Run, it gives every route to the flow network, which would throw on an unequal crossing.
  CHECK(flow::FastRuntime(topology, {}).run(job, {}, {}).iteration_s > 0);
}

TEST_CASE("NICs of a node with two members of a group that spans nodes are not mirrored", "[unit]") {
  // Rank 4 (z group {0, 4, 8, 12}) onto GPU 1, rank 1 onto GPU 4: node 0 then holds ranks 0 and 4 of
  // one z group, whose ring may leave node 0 through one NIC and enter through the other.
  const auto topology = small_dragonfly(topo::RoutingPolicy::Minimal);
  const auto plan = axonn_plan();
  auto job = job_for(plan, 20e-6);
  job.gpu_of_rank.resize(plan.grid.world_size());
  for (std::uint32_t r = 0; r < job.gpu_of_rank.size(); ++r) job.gpu_of_rank[r] = r;
  std::swap(job.gpu_of_rank[1], job.gpu_of_rank[4]);
  const auto pairs = flow::mirrored_nic_pairs(topology, job);
  CHECK_FALSE(mirrored(topology, pairs, 0, 0));
  CHECK_FALSE(mirrored(topology, pairs, 0, 1));
  // Node 1 holds ranks 1 and 5 of z group {1, 5, 9, 13} now; node 2 (ranks 8-11) is as before.
  CHECK_FALSE(mirrored(topology, pairs, 1, 0));
  CHECK(mirrored(topology, pairs, 2, 0));
  CHECK(mirrored(topology, pairs, 15, 1));
  CHECK(pairs.size() == topology.node_count() * topology.nics_per_node() - 4);
  // The runs agree with the reference solver, which keeps every link, and without mirrors.
  for (const auto solver : {flow::Solver::Local, flow::Solver::Components}) {
    INFO("solver " << static_cast<int>(solver));
    flow::FastOptions plain{solver};
    plain.mirror_nics = false;
    const double with = flow::FastRuntime(topology, {solver}).run(job, {}, {}).iteration_s;
    CHECK(with == Approx(flow::FastRuntime(topology, plain).run(job, {}, {}).iteration_s).epsilon(1e-12));
    CHECK(with ==
          Approx(flow::FastRuntime(topology, {flow::Solver::Reference}).run(job, {}, {}).iteration_s).epsilon(1e-9));
  }
}

TEST_CASE("a plan with point-to-point transfers mirrors no NIC", "[unit]") {
  const auto topology = small_dragonfly(topo::RoutingPolicy::Adaptive);
  const schedule::ModelSpec model{"t", 8, 256, 8, 128, 1000};
  const auto plan = schedule::build_megatron_plan(model, {4, 4, 2, 2, 1, 2, true}, {32, schedule::Recompute::Full},
                                                  {true, true, true, true});
  CHECK(flow::mirrored_nic_pairs(topology, job_for(plan, 20e-6)).empty());
  // Without pipeline stages there are none: a data-parallel ring of one member a node mirrors.
  const auto flat = schedule::build_megatron_plan(model, {4, 1, 16, 1, 1, 1, false}, {32, schedule::Recompute::Full},
                                                  {true, true, true, true});
  CHECK_FALSE(flow::mirrored_nic_pairs(topology, job_for(flat, 20e-6)).empty());
}

TEST_CASE("a scattered job leaves the mirrored down links out and gives the same iteration", "[unit]") {
  // Ranks on a shuffled GPU order: rings cross groups, and some groups share nodes (those NICs keep
  // both links). Fixed routes keep the run well-conditioned: the answers agree to rounding.
  const auto plan = axonn_plan();
  const auto job = scattered_job(plan);
  for (const auto routing : {topo::RoutingPolicy::Minimal, topo::RoutingPolicy::Valiant}) {
    const auto topology = small_dragonfly(routing);
    const auto pairs = flow::mirrored_nic_pairs(topology, job);
    CHECK_FALSE(pairs.empty());
    CHECK(pairs.size() < topology.node_count() * topology.nics_per_node());
    flow::SolverCounters with_counters, without_counters;
    flow::FastOptions with{flow::Solver::Local}, without{flow::Solver::Local};
    with.counters = &with_counters;
    without.counters = &without_counters;
    without.mirror_nics = false;
    const double a = flow::FastRuntime(topology, with).run(job, {}, {}).iteration_s;
    const double b = flow::FastRuntime(topology, without).run(job, {}, {}).iteration_s;
    CHECK(a == Approx(b).epsilon(1e-12));
    CHECK(with_counters.route_entries < without_counters.route_entries);
  }
}
