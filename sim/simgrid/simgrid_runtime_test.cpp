// The SimGrid runtime against closed forms and against the fast flow core (the cross-check).
//
// Both backends must give the same iteration time within 1% on 4D plans over a single switch and a
// dragonfly with minimal and Valiant routing. Each SimGrid run forks a child (simgrid_runtime.hpp), so
// this binary runs many simulations in one process.

#include "sim/simgrid/simgrid_runtime.hpp"

#include "sim/simgrid/cross_check.hpp"

#include "sim/exec/test_support.hpp"
#include "sim/flow/fast_runtime.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/stream_builder.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/single_switch.hpp"
#include "topologies/test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

using namespace exasim;
using schedule::CollKind;

namespace {

std::unique_ptr<topo::Topology> single_switch(std::uint32_t nodes) { return sg::cross_check_single_switch(nodes); }

schedule::ModelSpec small_model() { return {"small", 2, 1024, 16, 512, 4096}; }

runtime::Job job_for(const schedule::Plan& plan) {
  runtime::Job job;
  job.plan = &plan;
  for (std::size_t k = 0; k < plan.kernels.size(); ++k) job.kernel_time_s.push_back(20e-6 + 3e-6 * double(k % 7));
  job.collective_step_overhead_s = 1e-6;
  return job;
}

void cross_check(const sg::CrossCheckCase& c) {
  const auto result = sg::run_cross_check(c);
  const auto& fast = result.fast;
  const auto& simgrid = result.simgrid;
  INFO(c.machine << ": gx gy gz gdata = " << c.grid.gx << " " << c.grid.gy << " " << c.grid.gz << " " << c.grid.gdata
                 << ", overlap " << c.overlap);
  INFO("Expectation (fast): " << fast.iteration_s << " s; Actual (simgrid): " << simgrid.iteration_s << " s ("
                              << result.difference_percent() << " %)");
  CHECK(std::abs(result.difference_percent()) < 1.0);
  CHECK(simgrid.backend == "simgrid");
  CHECK(simgrid.flows == fast.flows);
  CHECK(simgrid.events == fast.events);
  CHECK(simgrid.rank0_collectives == fast.rank0_collectives);
  REQUIRE(simgrid.rank0_wire_bytes.size() == fast.rank0_wire_bytes.size());
  for (std::size_t d = 0; d < fast.rank0_wire_bytes.size(); ++d)
    CHECK(simgrid.rank0_wire_bytes[d] == Approx(fast.rank0_wire_bytes[d]));
  REQUIRE(simgrid.ranks.size() == fast.ranks.size());
  for (std::size_t r = 0; r < fast.ranks.size(); r += 7) {
    // SimGrid's clock resolves events to about 1e-9 s (precision/timing), summed over ~100 kernels.
    CHECK(simgrid.ranks[r].compute_s == Approx(fast.ranks[r].compute_s).epsilon(1e-6));
    CHECK(simgrid.ranks[r].finish_s == Approx(fast.ranks[r].finish_s).epsilon(0.01));
  }
}

std::unique_ptr<topo::Topology> switch_64() { return single_switch(16); }
std::unique_ptr<topo::Topology> dragonfly_128_minimal() {
  return sg::cross_check_dragonfly(4, 4, 4, topo::RoutingPolicy::Minimal);
}
std::unique_ptr<topo::Topology> dragonfly_256_valiant() {
  return sg::cross_check_dragonfly(8, 4, 4, topo::RoutingPolicy::Valiant);
}
std::unique_ptr<topo::Topology> dragonfly_1024_minimal() {
  return sg::cross_check_dragonfly(8, 8, 8, topo::RoutingPolicy::Minimal);
}
std::unique_ptr<topo::Topology> dragonfly_1024_valiant() {
  return sg::cross_check_dragonfly(8, 8, 8, topo::RoutingPolicy::Valiant);
}

/// 8 nodes of 4 GPUs on an NVSwitch, rail-optimised fat tree of 2 scalable units, 2 spines: leaves 2:1
/// tapered, so that flows meet on the NVSwitch links and on the leaf up-links.
std::unique_ptr<topo::Topology> nvswitch_rails_32() {
  return std::make_unique<topo::FatTree>(topo::testing::nvswitch_rail_tree(4, 2));
}

/// One stream for every rank: ops appended by hand (StreamBuilder has no Send/Recv yet).
schedule::Plan p2p_plan(std::uint32_t p, const std::vector<std::tuple<CollKind, std::int16_t, std::uint16_t>>& posts,
                        const std::vector<std::uint16_t>& waits, double bytes) {
  schedule::Plan plan;
  plan.grid = schedule::ProcessGrid({{"pp", p}});
  plan.streams.resize(1);
  plan.names = {"p2p"};
  auto& stream = plan.streams[0];
  for (auto [kind, peer, slot] : posts) {
    schedule::Op op;
    op.type = schedule::OpType::CollStart;
    op.coll = kind;
    op.peer = peer;
    op.slot = slot;
    op.bytes = bytes;
    stream.ops.push_back(op);
    stream.slots = std::max<std::uint16_t>(stream.slots, slot + 1);
  }
  for (auto slot : waits) {
    schedule::Op op;
    op.type = schedule::OpType::Wait;
    op.slot = slot;
    stream.ops.push_back(op);
  }
  return plan;
}

/// Every rank of a group of p posts one all-reduce of S bytes.
schedule::Plan one_all_reduce(std::uint32_t p, double S) {
  schedule::Plan plan;
  plan.grid = schedule::ProcessGrid({{"x", p}});
  plan.streams.resize(1);
  schedule::StreamBuilder(plan, plan.streams[0]).collective("ar", CollKind::AllReduce, 0, S);
  return plan;
}

}  // namespace

TEST_CASE("ring all-reduce on SimGrid takes 2(p-1)/p*S/B plus its latency term", "[unit]") {
  const double S = 64e6, B = 100e9, lat = 2e-6, overhead = 3e-6;
  topo::SingleSwitchParams sp;
  sp.node = {4, B, lat, 1, 25e9, 1e-6};
  topo::SingleSwitch topology(sp);
  const auto plan = one_all_reduce(4, S);
  runtime::Job job;
  job.plan = &plan;
  job.collective_step_overhead_s = overhead;
  const double expected = 1.5 * S / B + 6 * (lat + overhead);
  auto result = sg::make_simgrid_runtime(topology, {})->run(job, {}, {});
  INFO("Expectation: " << expected << " s");
  CHECK(result.iteration_s == Approx(expected).epsilon(1e-6));
  CHECK(result.backend == "simgrid");
  CHECK(result.flows == 1);  // the ring is one bundle flow
  CHECK(result.ranks[2].exposed_s[0] == Approx(expected).epsilon(1e-6));
}

TEST_CASE("a ring whose hops cross a link twice moves at half that link's rate on both runtimes", "[unit]") {
  // Two nodes of two GPUs, one 25 GB/s NIC each; ranks 0..3 on GPUs 0, 2, 1, 3, so the ring
  // 0->2->1->3->0 crosses every NIC direction twice: the bundle gets 12.5 GB/s per hop.
  const double S = 64e6, nic = 25e9;
  topo::SingleSwitchParams sp;
  sp.node = {2, 100e9, 1e-6, 1, nic, 1e-6};
  sp.nodes = 2;
  topo::SingleSwitch topology(sp);
  const auto plan = one_all_reduce(4, S);
  runtime::Job job;
  job.plan = &plan;
  job.gpu_of_rank = {0, 2, 1, 3};
  const double bandwidth_term = 1.5 * S / (nic / 2);
  const auto simgrid = sg::make_simgrid_runtime(topology, {})->run(job, {}, {});
  const auto fast = flow::FastRuntime(topology, {}).run(job, {}, {});
  CHECK(fast.iteration_s > bandwidth_term);
  CHECK(fast.iteration_s < bandwidth_term * 1.01);
  CHECK(simgrid.iteration_s == Approx(fast.iteration_s).epsilon(1e-6));
}

TEST_CASE("a ring of Send/Recv pairs moves S per pair in S/B plus one step of latency", "[unit]") {
  const double S = 10e6, B = 100e9, lat = 2e-6, overhead = 1e-6;
  topo::SingleSwitchParams sp;
  sp.node = {4, B, lat, 1, 25e9, 1e-6};
  topo::SingleSwitch topology(sp);
  // Every rank sends to its successor and receives from its predecessor, then waits for both.
  auto plan = p2p_plan(4, {{CollKind::Send, 1, 0}, {CollKind::Recv, -1, 1}}, {0, 1}, S);
  runtime::Job job;
  job.plan = &plan;
  job.collective_step_overhead_s = overhead;
  auto result = sg::make_simgrid_runtime(topology, {})->run(job, {}, {});
  CHECK(result.iteration_s == Approx(S / B + lat + overhead).epsilon(1e-6));
  CHECK(result.flows == 4);  // four Send/Recv pairs
  CHECK(result.rank0_wire_bytes[0] == Approx(S));
}

TEST_CASE("the SimGrid runtime reports errors as the fast core does", "[unit]") {
  topo::SingleSwitchParams sp;
  sp.node = {4, 100e9, 1e-6, 1, 25e9, 1e-6};
  topo::SingleSwitch topology(sp);
  SECTION("a Send nobody receives is a deadlock") {
    auto plan = p2p_plan(4, {{CollKind::Send, 1, 0}}, {0}, 1e6);
    runtime::Job job;
    job.plan = &plan;
    CHECK_THROWS_AS(sg::make_simgrid_runtime(topology, {})->run(job, {}, {}), std::logic_error);
  }
  SECTION("a plan bigger than the machine") {
    schedule::Plan plan;
    plan.grid = schedule::ProcessGrid({{"x", 8}});
    plan.streams.resize(1);
    runtime::Job job;
    job.plan = &plan;
    CHECK_THROWS_AS(sg::make_simgrid_runtime(topology, {})->run(job, {}, {}), std::invalid_argument);
  }
}

TEST_CASE("the observer sees the same ops at the same times on both backends", "[unit]") {
  auto topology = single_switch(4);
  auto plan = schedule::build_axonn4d_plan(small_model(), {2, 2, 2, 2}, {8, schedule::Recompute::Full}, {});
  auto job = job_for(plan);
  using Record = std::tuple<runtime::Rank, std::uint32_t, double, double>;
  auto collect = [&](runtime::Runtime& rt) {
    std::vector<Record> records;
    rt.run(
        job, [](runtime::Rank r) { return r % 3 == 0; },
        [&](runtime::Rank r, std::uint32_t op, double t0, double t1) { records.emplace_back(r, op, t0, t1); });
    std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
      return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
    });
    return records;
  };
  flow::FastRuntime fast_rt(*topology, {});
  auto fast = collect(fast_rt);
  auto simgrid = collect(*sg::make_simgrid_runtime(*topology, {}));
  REQUIRE(simgrid.size() == fast.size());
  for (std::size_t i = 0; i < fast.size(); ++i) {
    REQUIRE(std::get<0>(simgrid[i]) == std::get<0>(fast[i]));
    REQUIRE(std::get<1>(simgrid[i]) == std::get<1>(fast[i]));
    CHECK(std::get<2>(simgrid[i]) == Approx(std::get<2>(fast[i])).margin(1e-9));
    CHECK(std::get<3>(simgrid[i]) == Approx(std::get<3>(fast[i])).margin(1e-9));
  }
}

TEST_CASE("SimGrid and the fast core agree within 1% on 4D iterations", "[integration]") {
  const sg::CrossCheckCase cases[] = {
      {"single switch, 64 GPUs", switch_64, {2, 2, 2, 8}, true},
      {"single switch, 64 GPUs", switch_64, {1, 4, 4, 4}, false},
      {"dragonfly minimal, 128 GPUs", dragonfly_128_minimal, {4, 2, 2, 8}, true},
      {"dragonfly minimal, 128 GPUs", dragonfly_128_minimal, {2, 2, 4, 8}, false},
      {"dragonfly Valiant, 256 GPUs", dragonfly_256_valiant, {2, 4, 4, 8}, true},
      {"dragonfly Valiant, 256 GPUs", dragonfly_256_valiant, {4, 4, 2, 4}, false},
  };
  for (const auto& c : cases) cross_check(c);
}

TEST_CASE("SimGrid and the fast core agree within 1% on collectives of several stages and bundles", "[integration]") {
  const exec::SplitRingRouter split;
  sg::CrossCheckCase c{"single switch, 64 GPUs, split rings", switch_64, {2, 2, 2, 8}, true, &split};
  cross_check(c);
  c = {"dragonfly Valiant, 256 GPUs, split rings", dragonfly_256_valiant, {2, 4, 4, 8}, false, &split};
  cross_check(c);
  // Each collective of the plain ring is four flows here (two stages of two bundles), and slower.
  const auto plain = sg::run_cross_check({"single switch", switch_64, {2, 2, 2, 8}, true});
  const auto result = sg::run_cross_check({"single switch", switch_64, {2, 2, 2, 8}, true, &split});
  CHECK(result.fast.flows == 4 * plain.fast.flows);
  CHECK(result.fast.iteration_s > plain.fast.iteration_s);
  CHECK(result.simgrid.iteration_s > plain.simgrid.iteration_s);
}

TEST_CASE("SimGrid and the fast core agree within 1% under tree, hierarchical and auto", "[integration]") {
  using collectives::Algorithm;
  // y groups of {2, 8, 2, 2} put two members on each of four nodes: hierarchical applies there, and
  // tree bundles mix GPU-GPU and network links (the fast core then solves node-local flows with the rest).
  const sg::CrossCheckCase cases[] = {
      {"single switch, 64 GPUs, tree", switch_64, {2, 8, 2, 2}, true, nullptr, Algorithm::Tree},
      {"single switch, 64 GPUs, hierarchical", switch_64, {2, 8, 2, 2}, true, nullptr, Algorithm::Hierarchical},
      {"dragonfly minimal, 128 GPUs, auto", dragonfly_128_minimal, {2, 8, 2, 4}, false, nullptr, Algorithm::Auto},
  };
  for (const auto& c : cases) cross_check(c);
  // The algorithms do change the answer (a guard against the job's algorithm being ignored).
  const auto ring = sg::run_cross_check({"ring", switch_64, {2, 8, 2, 2}, true});
  const auto tree = sg::run_cross_check(cases[0]);
  const auto hierarchical = sg::run_cross_check(cases[1]);
  CHECK(tree.fast.iteration_s != ring.fast.iteration_s);
  CHECK(hierarchical.fast.flows > ring.fast.flows);  // several stages of several bundles
}

TEST_CASE("SimGrid and the fast core agree within 1% under direct", "[integration]") {
  // Every pair of a group at once, each its own one-hop bundle; all-reduces in two stages.
  cross_check(
      {"single switch, 64 GPUs, direct", switch_64, {2, 8, 2, 2}, true, nullptr, collectives::Algorithm::Direct});
}

TEST_CASE("SimGrid and the fast core agree within 1% on NVSwitch nodes and a rail-optimised fat tree",
          "[integration]") {
  const auto machine = nvswitch_rails_32();
  REQUIRE(machine->node_switch_count() == 8);
  const sg::CrossCheckCase cases[] = {
      {"nvswitch, rails, 32 GPUs", nvswitch_rails_32, {4, 2, 2, 2}, true},   // x rings on one NVSwitch
      {"nvswitch, rails, 32 GPUs", nvswitch_rails_32, {2, 2, 2, 4}, false},  // z, data rings on one rail
      // x rings of 8 over two nodes: NVSwitch hops, and GPU 3 -> GPU 0 of the next node across rails.
      {"nvswitch, rails, 32 GPUs", nvswitch_rails_32, {8, 2, 1, 2}, false},
  };
  for (const auto& c : cases) cross_check(c);
}

TEST_CASE("SimGrid and the fast core agree within 1% at 1,024 GPUs", "[slow]") {
  const auto adaptive = [] { return sg::cross_check_dragonfly(8, 8, 8, topo::RoutingPolicy::Adaptive); };
  const auto adaptive_in_parts = [] { return sg::cross_check_dragonfly(8, 8, 8, topo::RoutingPolicy::Adaptive, 4); };
  const sg::CrossCheckCase cases[] = {
      {"dragonfly minimal, 1024 GPUs", dragonfly_1024_minimal, {4, 4, 2, 32}, true},
      {"dragonfly Valiant, 1024 GPUs", dragonfly_1024_valiant, {8, 2, 4, 16}, false},
      {"dragonfly adaptive, 1024 GPUs", adaptive, {4, 4, 2, 32}, true},
      {"dragonfly adaptive, 1024 GPUs", adaptive, {4, 4, 2, 32}, false},
      {"dragonfly adaptive in 4 parts, 1024 GPUs", adaptive_in_parts, {4, 4, 2, 32}, false},
  };
  for (const auto& c : cases) cross_check(c);
}

TEST_CASE("adaptive routing: SimGrid and the fast core choose the same routes", "[integration]") {
  // Both launch the collectives that became ready in an instant together, after every event of the
  // instant, so that adaptive routing reads the same loads in both (actor_simulation.cpp): the
  // answers agree to rounding, with each flow routed whole and in parts.
  auto plan = schedule::build_axonn4d_plan(small_model(), {4, 2, 2, 8}, {32, schedule::Recompute::Full}, {});
  for (const std::uint32_t parts : {1u, 4u}) {
    for (const bool spread : {false, true}) {
      auto topology = sg::cross_check_dragonfly(4, 4, 4, topo::RoutingPolicy::Adaptive, parts);
      auto job = job_for(plan);
      if (spread) {  // node k of the job on node (k * 5) mod 32: every ring crosses groups
        for (std::uint32_t r = 0; r < plan.grid.world_size(); ++r)
          job.gpu_of_rank.push_back((r / 4 * 5) % 32 * 4 + r % 4);
      }
      auto first = sg::make_simgrid_runtime(*topology, {})->run(job, {}, {});
      auto second = sg::make_simgrid_runtime(*topology, {})->run(job, {}, {});
      flow::FastRuntime fast(*topology, {});
      auto reference = fast.run(job, {}, {});
      INFO(parts << " parts, spread " << spread << ": fast " << reference.iteration_s << " s, simgrid "
                 << first.iteration_s << " s");
      CHECK(first.iteration_s == second.iteration_s);
      CHECK(first.flows == reference.flows);
      // Packed, the two agree to rounding. Spread, rings cross groups and the whole-byte wire sizes of
      // SimGrid (a byte per flow) can tip a tie between two candidates: measured 5e-7 (whole flows) and
      // 2e-4 (4 parts) apart; the backends must agree within 1%.
      CHECK(first.iteration_s == Approx(reference.iteration_s).epsilon(spread ? 1e-3 : 1e-9));
    }
  }
}

TEST_CASE("link loads: SimGrid and the fast core meter the same bytes and busy times", "[integration]") {
  auto topology = sg::cross_check_dragonfly(4, 4, 4, topo::RoutingPolicy::Adaptive);
  auto plan = schedule::build_axonn4d_plan(small_model(), {4, 2, 2, 8}, {32, schedule::Recompute::Full}, {});
  auto job = job_for(plan);
  sg::SimgridOptions sg_options;
  sg_options.meter_links = true;
  auto simgrid = sg::make_simgrid_runtime(*topology, sg_options)->run(job, {}, {});
  flow::FastOptions fast_options;
  fast_options.meter_links = true;
  flow::FastRuntime fast(*topology, fast_options);
  auto reference = fast.run(job, {}, {});
  const std::size_t links = topology->links().size();
  REQUIRE(reference.link_bytes.size() == links);
  REQUIRE(simgrid.link_bytes.size() == links);
  REQUIRE(simgrid.link_busy_s.size() == links);
  double total = 0;
  std::size_t used = 0;
  for (std::size_t l = 0; l < links; ++l) {
    INFO("link " << l);
    CHECK(simgrid.link_bytes[l] == Approx(reference.link_bytes[l]).epsilon(1e-12));
    CHECK(simgrid.link_busy_s[l] == Approx(reference.link_busy_s[l]).epsilon(1e-9).margin(1e-15));
    CHECK(reference.link_busy_s[l] <= reference.iteration_s * (1 + 1e-12));
    total += reference.link_bytes[l];
    used += reference.link_bytes[l] > 0 ? 1 : 0;
  }
  CHECK(used > links / 4);  // the job spans the machine: a quarter of the links at least carried bytes
  CHECK(total > 0);
  // Unmetered runs leave the vectors empty.
  flow::FastRuntime plain(*topology, {});
  CHECK(plain.run(job, {}, {}).link_bytes.empty());
}

TEST_CASE("SimGrid and the fast core agree within 1% on Megatron with context parallelism", "[integration]") {
  // The CP ring's Send/Recv over the nested cp dimension and the gradient reduction over dp_cp: 16 GPUs,
  // tp 2 x cp 4 x dp 2, the CP ring crossing nodes of 4.
  auto topology = single_switch(4);
  auto model = small_model();
  model.layers = 2;
  for (const auto comm : {schedule::CpComm::P2p, schedule::CpComm::AllGather}) {
    schedule::MegatronConfig cfg;
    cfg.tp = 2;
    cfg.cp = 4;
    cfg.dp = 2;
    cfg.zero = 1;
    cfg.cp_comm = comm;
    const auto plan =
        schedule::build_megatron_plan(model, cfg, {4, schedule::Recompute::Full}, {true, true, true, true});
    const auto job = job_for(plan);
    const auto fast = flow::FastRuntime(*topology, {}).run(job, {}, {});
    const auto simgrid = sg::make_simgrid_runtime(*topology, {})->run(job, {}, {});
    INFO(schedule::to_string(comm) << ": fast " << fast.iteration_s << " s, simgrid " << simgrid.iteration_s << " s");
    CHECK(simgrid.iteration_s == Approx(fast.iteration_s).epsilon(0.01));
    CHECK(simgrid.flows == fast.flows);
    const auto expected = schedule::wire_bytes_per_dim(plan, 0);
    REQUIRE(fast.rank0_wire_bytes.size() == 4);
    for (std::size_t d = 0; d < expected.size(); ++d) {
      CHECK(fast.rank0_wire_bytes[d] == Approx(expected[d]));
      CHECK(simgrid.rank0_wire_bytes[d] == Approx(expected[d]));
    }
    CHECK(expected[schedule::kMegDimCp] > 0);
  }
}
