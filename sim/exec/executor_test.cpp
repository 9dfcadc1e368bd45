#include "sim/exec/executor.hpp"

#include "sim/exec/test_support.hpp"
#include "sim/schedule/stream_builder.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>

using namespace exasim;
using schedule::CollKind;
using namespace exec::testing;  // one_node, one_dim_plan, job_for

namespace {

/// A network where every flow moves alone at one rate (no sharing): times follow from bytes alone, so
/// tests see the core's own bookkeeping. Events in time order, ties in the order started.
class ToyNetwork final : public exec::NetworkBackend {
 public:
  explicit ToyNetwork(double rate_Bps) : rate_Bps_(rate_Bps) {}
  void start_timer(double delay_s, exec::TimerKind kind, std::uint32_t id) override {
    events_.emplace(now_ + delay_s, Event{false, kind, id});
  }
  void start_flow(std::span<const topo::LinkId> route, double bytes, std::uint32_t tag) override {
    events_.emplace(now_ + bytes / rate_Bps_, Event{true, {}, tag});
    flow_starts_s.push_back(now_);
    route_sizes.push_back(route.size());
  }
  [[nodiscard]] const topo::LinkLoadView* load_view() const override { return nullptr; }
  void hold(const topo::LinkId* /*links*/, std::size_t count) override { held += count; }

  runtime::RunResult run(exec::Executor& core) {
    core.start();
    while (true) {
      core.launch_ready();
      if (events_.empty()) break;
      const auto [t, e] = *events_.begin();
      events_.erase(events_.begin());
      now_ = t;
      core.set_now(t);
      if (e.flow)
        core.flow_ended(e.id);
      else
        core.timer_ended(e.kind, e.id);
    }
    return core.finish("toy");
  }

  std::vector<double> flow_starts_s;
  std::vector<std::size_t> route_sizes;
  std::size_t held = 0;

 private:
  struct Event {
    bool flow;
    exec::TimerKind kind;
    std::uint32_t id;
  };
  double rate_Bps_;
  double now_ = 0;
  std::multimap<double, Event> events_;
};

/// A router that is not the real one: two stages, the first of two bundles (one of them twice as
/// long), the second of one. Each hop is one link; it records when each stage was routed.
class TwoStageRouter final : public exec::StageRouter {
 public:
  explicit TwoStageRouter(const ToyNetwork& network) : network_(network) {}
  [[nodiscard]] collectives::Algorithm resolve(collectives::Algorithm, const topo::Topology&,
                                               const collectives::GroupCall&) const override {
    return collectives::Algorithm::Hierarchical;
  }
  [[nodiscard]] std::uint32_t stage_count(collectives::Algorithm, const topo::Topology&,
                                          const collectives::GroupCall&) const override {
    return 2;
  }
  void route_stage(collectives::Algorithm, const topo::Topology&, const collectives::GroupCall& call,
                   std::uint32_t stage, const topo::LinkLoadView*, const collectives::OnHop& on_hop,
                   collectives::StageRoute& out) const override {
    out.clear();
    routed_stages.push_back(stage);
    routed_at_flows.push_back(network_.flow_starts_s.size());
    const std::uint32_t bundles = stage == 0 ? 2 : 1;
    for (std::uint32_t b = 0; b < bundles; ++b) {
      const auto begin = static_cast<std::uint32_t>(out.links.size());
      for (std::uint32_t hop = 0; hop < 3; ++hop) {
        out.links.push_back(hop);
        on_hop(&out.links.back(), 1);
      }
      out.bundles.push_back({begin, 3, call.bytes * (b + 1)});
    }
    out.latency_s = stage == 0 ? 1e-3 : 2e-3;
    out.rank0_wire_bytes = call.bytes;
  }
  mutable std::vector<std::uint32_t> routed_stages;
  mutable std::vector<std::size_t> routed_at_flows;  ///< flows started before the stage was routed

 private:
  const ToyNetwork& network_;
};

}  // namespace

TEST_CASE("a collective runs its stages one after another, each after its slowest bundle and latency", "[unit]") {
  const double S = 1e9, rate = 1e9;  // a bundle of S bytes takes 1 s
  auto plan = one_dim_plan(4);
  schedule::StreamBuilder(plan, plan.streams[0]).collective("ar", CollKind::AllReduce, 0, S);
  const auto topo = one_node(4);
  const auto job = job_for(plan, 0);
  ToyNetwork network(rate);
  TwoStageRouter router(network);
  exec::Executor core(topo, job, network, {}, {}, router);
  const auto result = network.run(core);
  // Stage 0: bundles of S and 2S end at 1 s and 2 s, latency 1 ms; stage 1: S (1 s) and 2 ms.
  CHECK(result.iteration_s == Approx(2.0 + 1e-3 + 1.0 + 2e-3).epsilon(1e-12));
  CHECK(router.routed_stages == std::vector<std::uint32_t>{0, 1});
  // Stage 1 is routed when stage 0 has ended, after its two bundles started, not with them.
  CHECK(router.routed_at_flows == std::vector<std::size_t>{0, 2});
  CHECK(network.flow_starts_s == std::vector<double>{0.0, 0.0, 2.0 + 1e-3});
  CHECK(network.route_sizes == std::vector<std::size_t>{3, 3, 3});
  CHECK(network.held == 9);  // every hop routed is held until its bundle starts
  CHECK(result.flows == 3);
  CHECK(result.rank0_wire_bytes[0] == Approx(2 * S));  // added up over the stages
  for (const auto& r : result.ranks) CHECK(r.exposed_s[0] == Approx(result.iteration_s));
  CHECK(result.events == 3 + 2);  // three flows and two stage latencies
}

TEST_CASE("the core reports deadlocks and plan mismatches in its own words", "[unit]") {
  const auto topo = one_node(2);
  ToyNetwork network(1e9);
  SECTION("a Send nobody receives") {
    auto plan = one_dim_plan(2);
    schedule::StreamBuilder b(plan, plan.streams[0]);
    b.wait(b.start("lonely", CollKind::Send, 0, 1e6, 1));
    const auto job = job_for(plan, 0);
    exec::Executor core(topo, job, network, {}, {});
    CHECK_THROWS_WITH(network.run(core), "deadlock: rank 0 stuck at op lonely");
  }
  SECTION("Send and Recv of different sizes") {
    auto plan = one_dim_plan(2);
    plan.role_dim = 0;
    plan.streams.resize(2);
    schedule::StreamBuilder s(plan, plan.streams[0]), r(plan, plan.streams[1]);
    s.wait(s.start("act", CollKind::Send, 0, 1e6, 1));
    r.wait(r.start("act", CollKind::Recv, 0, 2e6, -1));
    const auto job = job_for(plan, 0);
    exec::Executor core(topo, job, network, {}, {});
    CHECK_THROWS_WITH(network.run(core), "plan mismatch: send and recv sizes differ at act");
  }
}

TEST_CASE("observed ranks see each kernel and each collective from post to completion", "[unit]") {
  auto plan = one_dim_plan(2);
  schedule::StreamBuilder b(plan, plan.streams[0]);
  b.compute("k1", gpu::gemm(1, 1, 1));
  b.compute("k2", gpu::gemm(2, 2, 2));
  b.collective("ar", CollKind::AllReduce, 0, 1e9);
  const auto topo = one_node(2);
  const auto job = job_for(plan, 0.5);
  ToyNetwork network(1e9);
  std::vector<std::tuple<runtime::Rank, std::uint32_t, double, double>> seen;
  const runtime::OpObserver observer = [&](runtime::Rank r, std::uint32_t op, double t0, double t1) {
    seen.emplace_back(r, op, t0, t1);
  };
  const std::function<bool(runtime::Rank)> rank1 = [](runtime::Rank r) { return r == 1; };
  exec::Executor core(topo, job, network, rank1, observer);
  const auto result = network.run(core);
  // Two kernels of 0.5 s, then the ring (1 GB at 1 GB/s, the real router) and its latency term.
  REQUIRE(seen.size() == 4);
  CHECK(seen[0] == std::tuple<runtime::Rank, std::uint32_t, double, double>{1, 0, 0.0, 0.5});
  CHECK(seen[1] == std::tuple<runtime::Rank, std::uint32_t, double, double>{1, 1, 0.5, 1.0});
  CHECK(std::get<1>(seen[2]) == 2);  // the post, reported with its completion
  CHECK(std::get<2>(seen[2]) == 1.0);
  CHECK(std::get<3>(seen[2]) == Approx(result.iteration_s));
  CHECK(result.events == 2 * 2 + 1 + 1);  // every kernel of both ranks, the bundle, its latency
}

TEST_CASE("compute beside an in-flight collective slows by the job's factor, only while it overlaps", "[unit]") {
  // Each rank posts an all-reduce (1 GB at 1 GB/s: the ring's 2(p-1)/p S over one flow = 1 s for p = 2),
  // computes 3 s while it runs, then waits for it.
  const double S = 1e9;
  auto plan = one_dim_plan(2);
  schedule::StreamBuilder b(plan, plan.streams[0]);
  const auto h = b.start("ar", CollKind::AllReduce, 0, S);
  b.compute("k", gpu::gemm(1, 1, 1));
  b.wait(h);
  const auto topo = one_node(2, 100e9, 0);
  auto job = job_for(plan, 3.0);
  SECTION("no slowdown: the kernel's own 3 s") {
    ToyNetwork network(1e9);
    exec::Executor core(topo, job, network, {}, {});
    const auto result = network.run(core);
    CHECK(result.iteration_s == Approx(3.0));
    for (const auto& r : result.ranks) CHECK(r.slowed_s == 0);
  }
  SECTION("20 %: the first second runs at 1 / 1.2 of the rate, the rest at full rate") {
    job.compute_slowdown_beside_comm = 0.2;
    ToyNetwork network(1e9);
    exec::Executor core(topo, job, network, {}, {});
    const auto result = network.run(core);
    // 1 s of overlap does 1 / 1.2 s of work; the 0.2 / 1.2 s left runs after the kernel's 3 s.
    CHECK(result.iteration_s == Approx(3.0 + 0.2 / 1.2));
    for (const auto& r : result.ranks) {
      CHECK(r.slowed_s == Approx(0.2 / 1.2));
      CHECK(r.compute_s == Approx(3.0 + 0.2 / 1.2));
      CHECK(r.exposed_s[0] == Approx(0.0));
    }
  }
  SECTION("a collective that outlasts the kernel: the rest of the work runs slowed as well") {
    job.compute_slowdown_beside_comm = 0.5;
    job.kernel_time_s.assign(job.kernel_time_s.size(), 0.5);
    ToyNetwork network(1e9);
    exec::Executor core(topo, job, network, {}, {});
    const auto result = network.run(core);
    // The kernel overlaps the collective (0-1 s) throughout: 0.5 s of work at 1 / 1.5 of its rate ends at
    // 0.75 s; the rank then waits for the collective until 1 s.
    CHECK(result.iteration_s == Approx(1.0));
    for (const auto& r : result.ranks) {
      CHECK(r.slowed_s == Approx(0.25));
      CHECK(r.compute_s == Approx(0.75));
      CHECK(r.exposed_s[0] == Approx(0.25));
    }
  }
}

TEST_CASE("a group's collectives run one at a time in post order, other groups' beside them", "[unit]") {
  // Each all-reduce is 1 s alone (S = 1 GB, p = 2: the ring moves S over one flow at 1 GB/s, no latency).
  const double S = 1e9;
  const auto topo = one_node(4, 100e9, 0);
  SECTION("three posted at once on x: they complete at 1, 2 and 3 s, not all at once") {
    auto plan = one_dim_plan(2);
    schedule::StreamBuilder b(plan, plan.streams[0]);
    const auto h1 = b.start("ar1", CollKind::AllReduce, 0, S);
    const auto h2 = b.start("ar2", CollKind::AllReduce, 0, S);
    const auto h3 = b.start("ar3", CollKind::AllReduce, 0, S);
    b.wait(h1);
    b.wait(h2);
    b.wait(h3);
    const auto job = job_for(plan, 0);
    ToyNetwork network(1e9);                    // every flow at its own rate: concurrent ones would all end at 1 s
    std::map<std::uint32_t, double> completed;  // op index of the post -> completion, rank 0
    const runtime::OpObserver observer = [&](runtime::Rank, std::uint32_t op, double, double t1) {
      if (op < 3) completed[op] = t1;
    };
    exec::Executor core(
        topo, job, network, [](runtime::Rank r) { return r == 0; }, observer);
    const auto result = network.run(core);
    CHECK(network.flow_starts_s == std::vector<double>{0.0, 1.0, 2.0});  // one ring flow each
    CHECK(completed == std::map<std::uint32_t, double>{{0, 1.0}, {1, 2.0}, {2, 3.0}});
    CHECK(result.iteration_s == Approx(3.0));
  }
  SECTION("the same on a machine whose group order is concurrent (an MPI library): all start at once") {
    auto plan = one_dim_plan(2);
    schedule::StreamBuilder b(plan, plan.streams[0]);
    const auto h1 = b.start("ar1", CollKind::AllReduce, 0, S);
    const auto h2 = b.start("ar2", CollKind::AllReduce, 0, S);
    b.wait(h1);
    b.wait(h2);
    auto job = job_for(plan, 0);
    job.collectives_in_post_order = false;
    ToyNetwork network(1e9);
    exec::Executor core(topo, job, network, {}, {});
    CHECK(network.run(core).iteration_s == Approx(1.0));
    CHECK(network.flow_starts_s == std::vector<double>{0.0, 0.0});
  }
  SECTION("one on x and one on y posted at once: different communicators, both end at 1 s") {
    schedule::Plan plan;
    plan.grid = schedule::ProcessGrid({{"x", 2}, {"y", 2}});
    plan.streams.resize(1);
    schedule::StreamBuilder b(plan, plan.streams[0]);
    const auto hx = b.start("arx", CollKind::AllReduce, 0, S);
    const auto hy = b.start("ary", CollKind::AllReduce, 1, S);
    b.wait(hx);
    b.wait(hy);
    const auto job = job_for(plan, 0);
    ToyNetwork network(1e9);
    exec::Executor core(topo, job, network, {}, {});
    CHECK(network.run(core).iteration_s == Approx(1.0));
  }
}
