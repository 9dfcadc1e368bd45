#include "sim/flow/fast_runtime.hpp"

#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/stream_builder.hpp"
#include "topologies/single_switch.hpp"

#include <catch2/catch.hpp>

using namespace exasim;
using schedule::CollKind;

namespace {

topo::SingleSwitch one_node(std::uint32_t gpus, double bw, double latency) {
  topo::SingleSwitchParams p;
  p.node = {gpus, bw, latency, 1, 25e9, 1e-6};
  p.nodes = 1;
  return topo::SingleSwitch(p);
}

schedule::Plan empty_plan(std::uint32_t p) {
  schedule::Plan plan;
  plan.grid = schedule::ProcessGrid({{"x", p}});
  plan.streams.resize(1);
  return plan;
}

runtime::Job job_for(const schedule::Plan& plan, double kernel_s, double overhead_s) {
  runtime::Job job;
  job.plan = &plan;
  job.kernel_time_s.assign(plan.kernels.size(), kernel_s);
  job.collective_step_overhead_s = overhead_s;
  return job;
}

double run_time(const topo::Topology& topo, const runtime::Job& job, bool full = false) {
  flow::FastRuntime rt(topo, {full});
  return rt.run(job, {}, {}).iteration_s;
}

}  // namespace

TEST_CASE("ring all-reduce on uniform links takes 2(p-1)/p*S/B plus its latency term", "[unit]") {
  const double S = 256e6, B = 100e9, lat = 2e-6, overhead = 3e-6;
  for (std::uint32_t p : {2u, 4u, 8u}) {
    auto plan = empty_plan(p);
    schedule::StreamBuilder(plan, plan.streams[0]).collective("ar", CollKind::AllReduce, 0, S);
    auto topo = one_node(p, B, lat);
    double expected = 2.0 * (p - 1) / p * S / B + 2.0 * (p - 1) * (lat + overhead);
    INFO("Expectation: " << expected << " s for p = " << p);
    CHECK(run_time(topo, job_for(plan, 0, overhead)) == Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("all-gather and reduce-scatter move (p-1)/p*S", "[unit]") {
  const double S = 64e6, B = 50e9;
  auto plan = empty_plan(4);
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

  auto overlapped = empty_plan(2);
  {
    schedule::StreamBuilder b(overlapped, overlapped.streams[0]);
    auto h = b.start("ar", CollKind::AllReduce, 0, S);
    b.compute("gemm", gpu::gemm(1, 1, 1));
    b.wait(h);
  }
  auto blocking = empty_plan(2);
  {
    schedule::StreamBuilder b(blocking, blocking.streams[0]);
    b.collective("ar", CollKind::AllReduce, 0, S);
    b.compute("gemm", gpu::gemm(1, 1, 1));
  }
  CHECK(run_time(topo, job_for(overlapped, compute, 0)) == Approx(compute));
  CHECK(run_time(topo, job_for(blocking, compute, 0)) == Approx(compute + 1e-3));
}

TEST_CASE("incremental solver matches the full reference solver on 4D iterations", "[unit]") {
  schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  topo::SingleSwitchParams sp;
  sp.node = {4, 100e9, 1e-6, 2, 25e9, 1e-6};
  sp.nodes = 8;
  sp.switch_latency_s = 3e-7;
  topo::SingleSwitch topo(sp);
  for (auto cfg : {schedule::Axonn4DConfig{2, 2, 2, 4}, schedule::Axonn4DConfig{1, 4, 4, 2},
                   schedule::Axonn4DConfig{4, 1, 2, 4}}) {
    for (bool overlap : {true, false}) {
      auto plan = schedule::build_axonn4d_plan(model, cfg, {64, true, 4}, {overlap, overlap, overlap, overlap});
      auto job = job_for(plan, 20e-6, 1e-6);
      double fast = run_time(topo, job, false), reference = run_time(topo, job, true);
      INFO("gx gy gz gdata = " << cfg.gx << " " << cfg.gy << " " << cfg.gz << " " << cfg.gdata);
      CHECK(fast == Approx(reference).epsilon(1e-3));
    }
  }
}

TEST_CASE("bytes rank 0 puts on the wire in the simulation equal the plan's ring volumes", "[unit]") {
  schedule::ModelSpec model{"t", 2, 512, 8, 256, 1024};
  topo::SingleSwitchParams sp;
  sp.node = {4, 100e9, 1e-6, 4, 25e9, 1e-6};
  sp.nodes = 8;
  topo::SingleSwitch topo(sp);
  auto plan = schedule::build_axonn4d_plan(model, {2, 2, 4, 2}, {64, true, 4}, {});
  flow::FastRuntime rt(topo, {});
  auto result = rt.run(job_for(plan, 1e-5, 0), {}, {});
  auto expected = schedule::wire_bytes_per_dim(plan, 0);
  REQUIRE(result.rank0_wire_bytes.size() == 4);
  for (std::size_t d = 0; d < 4; ++d) {
    CHECK(expected[d] > 0);
    CHECK(result.rank0_wire_bytes[d] == Approx(expected[d]));
  }
}
