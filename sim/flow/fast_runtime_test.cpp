#include "sim/flow/fast_runtime.hpp"
#include "sim/exec/test_support.hpp"
#include "sim/flow/flow_network.hpp"
#include "sim/flow/internal/test_jobs.hpp"

#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/stream_builder.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/single_switch.hpp"
#include "topologies/test_support.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>  // dup, isatty

#include <cstdio>
#include <string>

using namespace exasim;
using schedule::CollKind;
using namespace exec::testing;  // one_node, one_dim_plan, job_for
using flow::testing::scattered_job;
using flow::testing::small_dragonfly;

namespace {

double run_time(const topo::Topology& topo, const runtime::Job& job, flow::Solver solver = flow::Solver::Local) {
  flow::FastRuntime rt(topo, {solver});
  return rt.run(job, {}, {}).iteration_s;
}

/// The 4D plan of the scattered-rank tests: 64 ranks, gx gy gz gdata = 2 2 4 4, 2 layers.
schedule::Plan scattered_plan() {
  const schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  return schedule::build_axonn4d_plan(model, {2, 2, 4, 4}, {64, schedule::Recompute::Full}, {true, true, true, true});
}

}  // namespace

TEST_CASE("ring all-reduce on uniform links takes 2(p-1)/p*S/B plus its latency term", "[unit]") {
  const double S = 256e6, B = 100e9, lat = 2e-6, overhead = 3e-6;
  for (std::uint32_t p : {2u, 4u, 8u}) {
    auto plan = one_dim_plan(p);
    schedule::StreamBuilder(plan, plan.streams[0]).collective("ar", CollKind::AllReduce, 0, S);
    auto topo = one_node(p, B, lat);
    double expected = 2.0 * (p - 1) / p * S / B + 2.0 * (p - 1) * (lat + overhead);
    INFO("Expectation: " << expected << " s for p = " << p);
    CHECK(run_time(topo, job_for(plan, 0, overhead)) == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("a collective of two stages of two bundles each shares links and pays two latency terms", "[unit]") {
  const double S = 256e6, B = 100e9, lat = 2e-6, overhead = 3e-6;
  const std::uint32_t p = 4;
  auto plan = one_dim_plan(p);
  schedule::StreamBuilder(plan, plan.streams[0]).collective("ar", CollKind::AllReduce, 0, S);
  auto topo = one_node(p, B, lat);
  const auto job = job_for(plan, 0, overhead);
  const exec::SplitRingRouter split;
  for (const auto solver : {flow::Solver::Local, flow::Solver::Reference}) {
    flow::FastOptions options{solver};
    options.router = &split;
    const auto result = flow::FastRuntime(topo, options).run(job, {}, {});
    const double latency_term = 2.0 * (p - 1) * (lat + overhead);
    CHECK(result.iteration_s == Approx(2.0 * (p - 1) / p * S / B + 2 * latency_term).epsilon(1e-9));
    CHECK(result.flows == 4);
    CHECK(result.rank0_wire_bytes[0] == Approx(2.0 * (p - 1) / p * S));
  }
}

TEST_CASE("all-gather and reduce-scatter move (p-1)/p*S", "[unit]") {
  const double S = 64e6, B = 50e9;
  auto plan = one_dim_plan(4);
  schedule::StreamBuilder b(plan, plan.streams[0]);
  b.collective("ag", CollKind::AllGather, 0, S);
  b.collective("rs", CollKind::ReduceScatter, 0, S);
  auto topo = one_node(4, B, 0);
  CHECK(run_time(topo, job_for(plan, 0, 0)) == Approx(2 * 0.75 * S / B));
}

TEST_CASE("overlapping a collective with compute hides it", "[unit]") {
  const double S = 100e6, B = 100e9;  // all-reduce over 2: 100 MB on the wire = 1 ms
  const double compute = 5e-3;
  auto topo = one_node(2, B, 0);

  auto overlapped = one_dim_plan(2);
  {
    schedule::StreamBuilder b(overlapped, overlapped.streams[0]);
    auto h = b.start("ar", CollKind::AllReduce, 0, S);
    b.compute("gemm", gpu::gemm(1, 1, 1));
    b.wait(h);
  }
  auto blocking = one_dim_plan(2);
  {
    schedule::StreamBuilder b(blocking, blocking.streams[0]);
    b.collective("ar", CollKind::AllReduce, 0, S);
    b.compute("gemm", gpu::gemm(1, 1, 1));
  }
  CHECK(run_time(topo, job_for(overlapped, compute, 0)) == Approx(compute));
  CHECK(run_time(topo, job_for(blocking, compute, 0)) == Approx(compute + 1e-3));
}

TEST_CASE("the incremental solvers match the full reference solver on 4D iterations", "[unit]") {
  schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  topo::SingleSwitchParams sp;
  sp.node = {4, 100e9, 1e-6, 2, 25e9, 1e-6};
  sp.nodes = 8;
  sp.switch_latency_s = 3e-7;
  topo::SingleSwitch topo(sp);
  for (auto cfg : {schedule::Axonn4DConfig{2, 2, 2, 4}, schedule::Axonn4DConfig{1, 4, 4, 2},
                   schedule::Axonn4DConfig{4, 1, 2, 4}}) {
    for (bool overlap : {true, false}) {
      auto plan = schedule::build_axonn4d_plan(model, cfg, {64, schedule::Recompute::Full},
                                               {overlap, overlap, overlap, overlap});
      auto job = job_for(plan, 20e-6, 1e-6);
      const double reference = run_time(topo, job, flow::Solver::Reference);
      INFO("gx gy gz gdata = " << cfg.gx << " " << cfg.gy << " " << cfg.gz << " " << cfg.gdata);
      CHECK(run_time(topo, job, flow::Solver::Local) == Approx(reference).epsilon(1e-3));
      CHECK(run_time(topo, job, flow::Solver::Components) == Approx(reference).epsilon(1e-3));
    }
  }
}

TEST_CASE("bytes rank 0 puts on the wire in the simulation equal the plan's ring volumes", "[unit]") {
  schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  topo::SingleSwitchParams sp;
  sp.node = {4, 100e9, 1e-6, 4, 25e9, 1e-6};
  sp.nodes = 8;
  topo::SingleSwitch topo(sp);
  auto plan = schedule::build_axonn4d_plan(model, {2, 2, 4, 2}, {64, schedule::Recompute::Full}, {});
  flow::FastRuntime rt(topo, {});
  auto result = rt.run(job_for(plan, 1e-5, 0), {}, {});
  auto expected = schedule::wire_bytes_per_dim(plan, 0);
  REQUIRE(result.rank0_wire_bytes.size() == 4);
  for (std::size_t d = 0; d < 4; ++d) {
    CHECK(expected[d] > 0);
    CHECK(result.rank0_wire_bytes[d] == Approx(expected[d]));
  }
}

namespace {

/// Plans whose stream depends on the coordinate along "pp" (one role per stage).
schedule::Plan pipeline_plan(std::uint32_t stages) {
  schedule::Plan plan;
  plan.grid = schedule::ProcessGrid({{"pp", stages}});
  plan.role_dim = 0;
  plan.streams.resize(stages);
  return plan;
}

/// Writes Send/Recv ops into a pipeline plan, one StreamBuilder per stage (a builder owns its slots).
class P2PWriter {
 public:
  explicit P2PWriter(schedule::Plan& plan) : plan_(plan) {
    for (auto& stream : plan.streams) builders_.emplace_back(plan, stream);
  }
  /// A blocking Send or Recv to the rank `peer` steps along pp (the peer patched into its Wait too).
  void p2p(std::uint32_t stage, CollKind kind, std::int16_t peer, double bytes) {
    auto& ops = plan_.streams[stage].ops;
    auto h = builders_[stage].start(kind == CollKind::Send ? "send" : "recv", kind, 0, bytes);
    ops.back().peer = peer;
    builders_[stage].wait(h);
    ops.back().peer = peer;
  }
  void compute(std::uint32_t stage) { builders_[stage].compute("work", gpu::gemm(1, 1, 1)); }

 private:
  schedule::Plan& plan_;
  std::vector<schedule::StreamBuilder> builders_;
};

/// Kernel times from flops alone (memory-bound kernels free): every stage's work is exactly its GEMMs
/// and attention at 1 TFLOP/s.
runtime::Job flops_job(const schedule::Plan& plan) {
  runtime::Job job;
  job.plan = &plan;
  for (const auto& k : plan.kernels)
    job.kernel_time_s.push_back(k.kind == gpu::KernelKind::MemoryBound ? 0 : k.flops / 1e12);
  return job;
}

double compute_time_of_stream(const schedule::Plan& plan, const runtime::Job& job, std::size_t stream) {
  double t = 0;
  for (const auto& op : plan.streams[stream].ops)
    if (op.type == schedule::OpType::Compute) t += job.kernel_time_s[op.kernel];
  return t;
}

topo::SingleSwitch fast_machine(std::uint32_t gpus) {
  topo::SingleSwitchParams sp;
  sp.node = {4, 1e18, 0, 4, 1e18, 0};
  sp.nodes = (gpus + 3) / 4;
  return topo::SingleSwitch(sp);
}

/// Iteration time over m times one micro-batch's compute on a middle stage.
double pipeline_ratio(const schedule::MegatronConfig& cfg, std::int64_t global_batch) {
  // Vocabulary 8: the LM head adds < 0.1% to the last stage, so stages are uniform.
  const schedule::ModelSpec model{"uniform", 16, 256, 4, 128, 8};
  auto plan = schedule::build_megatron_plan(model, cfg, {global_batch, schedule::Recompute::Full});
  auto job = flops_job(plan);
  auto topo = fast_machine(cfg.gpus());
  const double m =
      static_cast<double>(schedule::megatron_micro_batches(cfg, {global_batch, schedule::Recompute::Full}));
  const double per_micro_batch = compute_time_of_stream(plan, job, 1) / m;
  return run_time(topo, job) / (m * per_micro_batch);
}

}  // namespace

TEST_CASE("a Send/Recv pair is one flow of S bytes plus one route latency", "[unit]") {
  const double S = 50e6, B = 25e9, lat = 2e-6, overhead = 3e-6;
  auto plan = pipeline_plan(2);
  P2PWriter w(plan);
  w.p2p(0, CollKind::Send, +1, S);
  w.p2p(1, CollKind::Recv, -1, S);
  auto topo = one_node(2, B, lat);
  CHECK(run_time(topo, job_for(plan, 0, overhead)) == Approx(S / B + lat + overhead).epsilon(1e-9));
  flow::FastRuntime rt(topo, {});
  auto result = rt.run(job_for(plan, 0, 0), {}, {});
  CHECK(result.rank0_wire_bytes[0] == Approx(S));
  CHECK(result.ranks[1].exposed_s[0] == Approx(S / B + lat));  // the receiver waited for the whole transfer
}

TEST_CASE("a transfer starts when both sides have posted, the k-th Send meets the k-th Recv", "[unit]") {
  const double S = 10e6, B = 10e9, compute = 4e-3;  // a transfer of S: 1 ms
  auto topo = one_node(3, B, 0);
  auto plan = pipeline_plan(3);
  {
    P2PWriter w(plan);
    w.compute(0);  // the sender is late by `compute`
    w.p2p(0, CollKind::Send, +1, S);
    w.p2p(0, CollKind::Send, +1, 2 * S);
    w.p2p(1, CollKind::Recv, -1, S);      // posted at 0, matched at 4 ms
    w.p2p(1, CollKind::Recv, +2, 2 * S);  // 1 + 2 mod 3 = 0: the same sender, named the other way round
    w.p2p(1, CollKind::Send, +1, S);
    w.p2p(2, CollKind::Recv, -1, S);
  }
  // Stage 2 receives after stage 1 got both messages: 4 ms + 1 ms + 2 ms + 1 ms.
  CHECK(run_time(topo, job_for(plan, compute, 0)) == Approx(compute + 4e-3));

  auto orphan = pipeline_plan(3);
  P2PWriter(orphan).p2p(2, CollKind::Recv, +1, S);  // from stage 0, which never sends
  CHECK_THROWS_AS(run_time(topo, job_for(orphan, 0, 0)), std::logic_error);
}

TEST_CASE("mismatched Send and Recv sizes are a plan error", "[unit]") {
  auto plan = pipeline_plan(2);
  P2PWriter w(plan);
  w.p2p(0, CollKind::Send, +1, 1e6);
  w.p2p(1, CollKind::Recv, +1, 2e6);
  auto topo = one_node(2, 1e9, 0);
  CHECK_THROWS_AS(run_time(topo, job_for(plan, 0, 0)), std::logic_error);
}

TEST_CASE("the 1F1B bubble emerges: (p-1)/(m+p-1) of the iteration with uniform stages", "[integration]") {
  for (auto [tp, pp, dp, batch] : {std::tuple{1u, 4u, 1u, 8}, std::tuple{1u, 4u, 1u, 32}, std::tuple{2u, 4u, 2u, 32},
                                   std::tuple{1u, 8u, 1u, 16}, std::tuple{1u, 4u, 1u, 2}}) {
    const double m = static_cast<double>(batch) / dp;
    const double bubble = (pp - 1) / (m + pp - 1);
    const double ratio = pipeline_ratio({tp, pp, dp, 1, 1, 1, false}, batch);
    INFO("tp=" << tp << " pp=" << pp << " dp=" << dp << " m=" << m << ": simulated bubble " << 1 - 1 / ratio
               << ", expected " << bubble);
    if (m >= pp)
      CHECK(1 - 1 / ratio == Approx(bubble).epsilon(0.01));
    else
      CHECK(ratio == Approx((m + pp - 1) / m).epsilon(0.01));  // m < p: every stage idles p-1 slots
  }
}

TEST_CASE("interleaving shrinks the bubble to (p-1)/(v*m) of the ideal time", "[integration]") {
  for (auto [pp, v, m] : {std::tuple{4u, 2u, 8}, std::tuple{4u, 4u, 8}, std::tuple{2u, 2u, 4}, std::tuple{4u, 2u, 4}}) {
    const double one_f_one_b = pipeline_ratio({1, pp, 1, 1, 1, 1, false}, m);
    const double ratio = pipeline_ratio({1, pp, 1, 1, 1, v, false}, m);
    const double expected = 1 + (pp - 1.0) / (v * m);
    INFO("pp=" << pp << " v=" << v << " m=" << m << ": 1F1B " << one_f_one_b << ", interleaved " << ratio
               << ", expected " << expected);
    CHECK(ratio < one_f_one_b);
    CHECK(ratio == Approx(expected).epsilon(0.01));
  }
}

TEST_CASE("Megatron plans run to the end and put the plan's bytes on the wire", "[integration]") {
  const schedule::ModelSpec model{"t", 8, 256, 8, 128, 1000};
  topo::SingleSwitchParams sp;
  sp.node = {4, 100e9, 1e-6, 2, 25e9, 1e-6};
  sp.nodes = 8;
  topo::SingleSwitch topo(sp);
  for (auto cfg : {schedule::MegatronConfig{2, 2, 2, 1, 1, 1, false}, schedule::MegatronConfig{2, 4, 2, 3, 1, 2, true},
                   schedule::MegatronConfig{1, 8, 2, 0, 1, 1, false}, schedule::MegatronConfig{4, 2, 4, 2, 1, 2, true},
                   schedule::MegatronConfig{1, 2, 1, 0, 1, 4, false}}) {
    for (bool overlap : {false, true}) {
      INFO("tp=" << cfg.tp << " pp=" << cfg.pp << " dp=" << cfg.dp << " zero=" << cfg.zero
                 << " v=" << cfg.virtual_stages << " overlap=" << overlap);
      auto plan =
          schedule::build_megatron_plan(model, cfg, {16, schedule::Recompute::Full}, {true, true, true, overlap});
      flow::FastRuntime rt(topo, {});
      auto result = rt.run(flops_job(plan), {}, {});
      auto expected = schedule::wire_bytes_per_dim(plan, 0);
      for (std::size_t d = 0; d < 3; ++d) CHECK(result.rank0_wire_bytes[d] == Approx(expected[d]));
      CHECK(result.iteration_s > 0);
      // The incremental solver agrees with the reference one on pipelines too.
      flow::FastRuntime reference(topo, {flow::Solver::Reference});
      CHECK(reference.run(flops_job(plan), {}, {}).iteration_s == Approx(result.iteration_s).epsilon(1e-3));
    }
  }
}

TEST_CASE("incremental solver matches the reference on a dragonfly under every routing policy", "[unit]") {
  // Adaptive routing reads link loads at launch, so this also checks that both solvers present the
  // same loads at the same instants.
  const schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  for (auto routing : {topo::RoutingPolicy::Minimal, topo::RoutingPolicy::Valiant, topo::RoutingPolicy::Adaptive}) {
    auto topo = small_dragonfly(routing);
    for (auto cfg : {schedule::Axonn4DConfig{2, 2, 4, 4}, schedule::Axonn4DConfig{4, 1, 2, 8}}) {
      auto plan = schedule::build_axonn4d_plan(model, cfg, {64, schedule::Recompute::Full}, {true, true, true, true});
      auto job = job_for(plan, 20e-6, 1e-6);
      INFO("routing " << static_cast<int>(routing) << ", gx gy gz gdata = " << cfg.gx << " " << cfg.gy << " " << cfg.gz
                      << " " << cfg.gdata);
      CHECK(run_time(topo, job) == Approx(run_time(topo, job, flow::Solver::Reference)).epsilon(1e-3));
    }
  }
}

TEST_CASE("the local solver matches the reference with ranks scattered over a dragonfly", "[unit]") {
  // Fixed routes (minimal, Valiant) keep the iteration well-conditioned, so the answers must agree to
  // rounding, not just to the adaptive runs' spread.
  const auto plan = scattered_plan();
  const auto job = scattered_job(plan);
  for (auto routing : {topo::RoutingPolicy::Minimal, topo::RoutingPolicy::Valiant}) {
    auto topo = small_dragonfly(routing);
    INFO("routing " << static_cast<int>(routing));
    const double reference = run_time(topo, job, flow::Solver::Reference);
    CHECK(run_time(topo, job, flow::Solver::Components) == reference);
    CHECK(run_time(topo, job, flow::Solver::Local) == Approx(reference).epsilon(1e-9));
  }
}

TEST_CASE("the run hands back the solver's counters: the local solver walks fewer route entries", "[unit]") {
  // Scattered ranks under minimal routing: completions cascade, so the local solver releases held
  // paths, and it enters fewer route entries than re-solving components.
  const auto plan = scattered_plan();
  const auto job = scattered_job(plan);
  auto topo = small_dragonfly(topo::RoutingPolicy::Minimal);
  const auto counted = [&](flow::Solver solver) {
    flow::SolverCounters counters;
    flow::FastOptions options{solver};
    options.counters = &counters;
    (void)flow::FastRuntime(topo, options).run(job, {}, {});
    return counters;
  };
  const flow::SolverCounters local = counted(flow::Solver::Local), components = counted(flow::Solver::Components);
  CHECK(local.resolves > 0);
  CHECK(local.paths_filled >= local.resolves);
  CHECK(local.paths_released > 0);
  CHECK(components.paths_released == 0);
  CHECK(local.rate_changes > 0);
  CHECK(local.route_entries > 0);
  CHECK(local.route_entries < components.route_entries);
}

TEST_CASE("incremental solver matches the reference on NVSwitch nodes of a rail-optimised fat tree", "[unit]") {
  // Node-local flows over the NVSwitch go to the per-node solver (node_flows.hpp) in the incremental
  // runs and to the general one in the reference: the same rates, so the same iteration, bit for bit
  // for the component solver (the local one sums residuals in another order).
  const schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  const topo::FatTree topo(topo::testing::nvswitch_rail_tree(4, 2));  // 2:1 tapered rail leaves
  REQUIRE(
      flow::FlowNetwork(topo.links(), flow::Solver::Local, {topo.node_count(), topo.links_per_node(), 4}).node_local());
  for (auto cfg : {schedule::Axonn4DConfig{4, 2, 2, 2}, schedule::Axonn4DConfig{2, 2, 2, 4},
                   schedule::Axonn4DConfig{8, 1, 2, 2}}) {
    auto plan = schedule::build_axonn4d_plan(model, cfg, {64, schedule::Recompute::Full}, {true, true, true, true});
    auto job = job_for(plan, 20e-6, 1e-6);
    INFO("gx gy gz gdata = " << cfg.gx << " " << cfg.gy << " " << cfg.gz << " " << cfg.gdata);
    const double reference = run_time(topo, job, flow::Solver::Reference);
    CHECK(run_time(topo, job, flow::Solver::Components) == reference);
    CHECK(run_time(topo, job, flow::Solver::Local) == Approx(reference).epsilon(1e-12));
  }
}

TEST_CASE("incremental solver matches the reference on Megatron pipelines over a dragonfly", "[unit]") {
  const schedule::ModelSpec model{"t", 8, 256, 8, 128, 1000};
  auto topo = small_dragonfly(topo::RoutingPolicy::Adaptive);
  for (auto cfg :
       {schedule::MegatronConfig{2, 4, 4, 1, 1, 1, false}, schedule::MegatronConfig{4, 4, 2, 2, 1, 2, true}}) {
    auto plan = schedule::build_megatron_plan(model, cfg, {32, schedule::Recompute::Full}, {true, true, true, true});
    auto job = flops_job(plan);
    INFO("tp=" << cfg.tp << " pp=" << cfg.pp << " dp=" << cfg.dp);
    CHECK(run_time(topo, job) == Approx(run_time(topo, job, flow::Solver::Reference)).epsilon(1e-3));
  }
}

TEST_CASE("runs are deterministic: the same job twice gives identical results", "[unit]") {
  const schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  auto topo = small_dragonfly(topo::RoutingPolicy::Adaptive);
  auto plan =
      schedule::build_axonn4d_plan(model, {2, 2, 4, 4}, {64, schedule::Recompute::Full}, {true, true, true, true});
  auto job = job_for(plan, 20e-6, 1e-6);
  flow::FastRuntime rt(topo, {});
  auto a = rt.run(job, {}, {}), b = rt.run(job, {}, {});
  CHECK(a.iteration_s == b.iteration_s);
  CHECK(a.events == b.events);
  for (std::size_t r = 0; r < a.ranks.size(); ++r) CHECK(a.ranks[r].exposed_s == b.ranks[r].exposed_s);
}

TEST_CASE("answers do not depend on the order in which an instant's events are handled", "[unit]") {
  // Adaptive routing makes launch order matter; launches are ordered by name, not by handling order.
  const schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  auto topo = small_dragonfly(topo::RoutingPolicy::Adaptive);
  for (auto cfg : {schedule::Axonn4DConfig{2, 2, 4, 4}, schedule::Axonn4DConfig{1, 2, 2, 16}}) {
    auto plan = schedule::build_axonn4d_plan(model, cfg, {64, schedule::Recompute::Full}, {true, true, true, true});
    auto job = job_for(plan, 20e-6, 1e-6);
    flow::FastOptions backwards;
    backwards.reverse_instants = true;
    auto a = flow::FastRuntime(topo, {}).run(job, {}, {});
    auto b = flow::FastRuntime(topo, backwards).run(job, {}, {});
    CHECK(a.iteration_s == b.iteration_s);
    for (std::size_t r = 0; r < a.ranks.size(); ++r) CHECK(a.ranks[r].exposed_s == b.ranks[r].exposed_s);
    // Later stages of collectives are routed in the same order as first stages.
    const exec::SplitRingRouter split;
    flow::FastOptions staged;
    staged.router = &split;
    backwards.router = &split;
    CHECK(flow::FastRuntime(topo, staged).run(job, {}, {}).iteration_s ==
          flow::FastRuntime(topo, backwards).run(job, {}, {}).iteration_s);
  }
  const schedule::ModelSpec pipelined{"t", 8, 256, 8, 128, 1000};
  auto plan = schedule::build_megatron_plan(pipelined, {4, 4, 2, 2, 1, 2, true}, {32, schedule::Recompute::Full},
                                            {true, true, true, true});
  flow::FastOptions backwards;
  backwards.reverse_instants = true;
  CHECK(flow::FastRuntime(topo, {}).run(flops_job(plan), {}, {}).iteration_s ==
        flow::FastRuntime(topo, backwards).run(flops_job(plan), {}, {}).iteration_s);
}

TEST_CASE("progress: quiet on short runs, and an empty callback is allowed", "[unit]") {
  const schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  auto topo = small_dragonfly(topo::RoutingPolicy::Minimal);
  auto plan = schedule::build_axonn4d_plan(model, {2, 2, 4, 4}, {64, schedule::Recompute::Full}, {});
  auto job = job_for(plan, 20e-6, 1e-6);
  int calls = 0;
  flow::FastOptions options;
  options.progress = [&](const flow::Progress&) { ++calls; };
  flow::FastRuntime rt(topo, options);
  const double with_progress = rt.run(job, {}, {}).iteration_s;
  CHECK(calls == 0);  // far below the 2 s threshold
  CHECK(with_progress == run_time(topo, job));
  flow::FastRuntime displayed(topo, {flow::Solver::Local, flow::progress_display()});
  CHECK(displayed.run(job, {}, {}).iteration_s == with_progress);
}

TEST_CASE("progress away from a terminal: a line every 5 s with the time left, none at the end", "[unit]") {
  if (isatty(STDERR_FILENO)) return;  // under ctest stderr is a pipe; a terminal gets the bar instead
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  std::fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  dup2(fileno(capture), STDERR_FILENO);
  auto display = flow::progress_display();
  display({0.10, 0.5, 3.0, false});   // before 5 s: nothing
  display({0.25, 1.0, 12.0, false});  // a line: 25 %, 36 s left
  display({0.30, 1.2, 15.0, false});  // within 5 s of the last line: nothing
  display({0.60, 2.5, 24.0, false});  // a line: 16 s left
  display({1.00, 4.0, 40.0, true});   // the end: nothing
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::rewind(capture);
  std::string text;
  for (int c; (c = std::fgetc(capture)) != EOF;) text += static_cast<char>(c);
  std::fclose(capture);
  CHECK(text ==
        "exasim: simulating, 25% done, 1.000 s simulated in 12 s of wall time, about 36 s left\n"
        "exasim: simulating, 60% done, 2.500 s simulated in 24 s of wall time, about 16 s left\n");
}

TEST_CASE("a group may have more collectives open than its first ring of ids holds", "[unit]") {
  // Rank 0 starts six all-reduces at once; rank 1 computes first, then starts the same six. All six are
  // open on the group until rank 1 posts (the ring of open ids starts at 4 and must grow), then they
  // run together: each of the two directed links carries six rings' hops, so S at B/6 each.
  const double S = 30e6, B = 60e9, compute = 1e-3;
  auto plan = pipeline_plan(2);
  schedule::StreamBuilder first(plan, plan.streams[0]), second(plan, plan.streams[1]);
  second.compute("work", gpu::gemm(1, 1, 1));
  for (auto* b : {&first, &second}) {
    std::vector<schedule::Handle> handles;
    for (int i = 0; i < 6; ++i) handles.push_back(b->start("ar", CollKind::AllReduce, 0, S));
    for (auto h : handles) b->wait(h);
  }
  auto topo = one_node(2, B, 0);
  for (const auto solver : {flow::Solver::Local, flow::Solver::Reference})
    CHECK(run_time(topo, job_for(plan, compute, 0), solver) == Approx(compute + 6 * S / B).epsilon(1e-9));
}
