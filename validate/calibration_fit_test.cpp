#include "validate/internal/calibration_fit.hpp"

#include "sim/core/json_view.hpp"
#include "sim/scenario/machine.hpp"
#include "sim/schedule/plan.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace exasim;

TEST_CASE("latency and bandwidth are recovered from exact points", "[unit]") {
  // Expectation: t = 20 us per step + bytes / 2 GB/s.
  std::vector<validate::FitPoint> pts;
  for (double steps : {1.0, 2.0, 6.0})
    for (double bytes : {65536.0, 1048576.0, 33554432.0}) pts.push_back({steps, bytes, steps * 20e-6 + bytes / 2e9});
  auto fit = validate::fit_latency_bandwidth(pts);
  CHECK(fit.latency_s == Approx(20e-6).epsilon(1e-9));
  CHECK(fit.bandwidth_Bps == Approx(2e9).epsilon(1e-9));
  CHECK(fit.rms_relative_error < 1e-9);
}

TEST_CASE("a negative latency is clamped to zero and the bandwidth refitted", "[unit]") {
  std::vector<validate::FitPoint> pts = {{1, 1e6, 0.9e-3}, {1, 2e6, 2.0e-3}, {1, 4e6, 4.1e-3}};
  auto fit = validate::fit_latency_bandwidth(pts);
  CHECK(fit.latency_s == 0);
  CHECK(fit.bandwidth_Bps == Approx(1e9).epsilon(0.05));
  CHECK_THROWS_AS(validate::fit_latency_bandwidth({{1, 1e6, 1e-3}}), std::invalid_argument);
}

TEST_CASE("times that fall as bytes grow (a loaded host) still fit a positive bandwidth", "[unit]") {
  // Measured on a 2-core host beside two busy loops: the small points slower than the large one.
  const std::vector<validate::FitPoint> pts = {{1, 8, 3e-3}, {1, 65536, 2.5e-3}, {1, 8e6, 2e-3}};
  const auto fit = validate::fit_latency_bandwidth(pts);
  CHECK(fit.latency_s == 0);
  CHECK(fit.bandwidth_Bps > 0);
  CHECK(std::isfinite(fit.rms_relative_error));
}

namespace {

/// A synthetic host: 10 us per step, 1 GB/s per rank when all ranks are busy, 5 GB/s for a lone pair.
emu::Microbench synthetic_host() {
  emu::Microbench bench;
  bench.host = "testhost";
  bench.ranks = 4;
  bench.poll_interval_s = 50e-6;
  for (double s : {8.0, 1e6, 8e6}) bench.samples.push_back({"pingpong", 2, 1, s, 4e-6 + s / 5e9});
  // Exchanges are information only: a wildly different one must not move the fit.
  for (double s : {1e6, 8e6}) bench.samples.push_back({"exchange", 2, 2, s, 10e-6 + s / 4e9});
  for (const char* kind : {"all_reduce", "all_gather", "reduce_scatter"})
    for (std::uint32_t p : {2u, 4u})
      for (double s : {65536.0, 4e6, 32e6}) {
        auto k = std::string(kind) == "all_reduce"   ? schedule::CollKind::AllReduce
                 : std::string(kind) == "all_gather" ? schedule::CollKind::AllGather
                                                     : schedule::CollKind::ReduceScatter;
        bench.samples.push_back(
            {kind, p, 4 / p, s, schedule::ring_steps(k, p) * 10e-6 + schedule::ring_wire_bytes(k, p, s) / 1e9});
      }
  return bench;
}

}  // namespace

TEST_CASE("microbenchmarks become a loadable single_switch machine with one node per rank", "[unit]") {
  const auto bench = synthetic_host();
  auto fit = validate::fit_host(bench);
  CHECK(fit.collectives.bandwidth_Bps == Approx(1e9).epsilon(1e-6));
  CHECK(fit.collectives.latency_s == Approx(10e-6).epsilon(1e-6));
  CHECK(fit.pingpong.bandwidth_Bps == Approx(5e9).epsilon(1e-6));
  CHECK(fit.collectives.points == 18);

  auto machine = validate::machine_json(fit, bench);
  nlohmann::json doc = nlohmann::json::parse(machine.dump());
  auto spec = scenario::load_machine_spec(JsonView(doc, "calibration.json", ""));
  CHECK(spec.node.gpus == 1);
  CHECK(spec.network["max_nodes"] == 4);
  CHECK(scenario::build_topology(spec, 4)->gpu_count() == 4);
  CHECK(spec.node.nic_bandwidth_Bps == Approx(1e9).epsilon(1e-6));
  // One ring step pays NIC up + NIC down + overhead = the fitted step latency.
  CHECK(2 * spec.node.nic_latency_s + spec.collective_step_overhead_s == Approx(10e-6).epsilon(1e-6));
  // The emulator's MPI runs a group's outstanding collectives beside each other, not one at a time.
  CHECK_FALSE(spec.collectives_in_post_order);
}

TEST_CASE("the calibrated machine reshaped to nodes of 4 costs a ring step the same inside and across nodes",
          "[unit]") {
  const auto bench = synthetic_host();
  const auto calibrated = nlohmann::json::parse(validate::machine_json(validate::fit_host(bench), bench).dump());
  CHECK(validate::machine_with_node_size(calibrated, 1) == calibrated);
  const auto doc = validate::machine_with_node_size(calibrated, 4);
  auto spec = scenario::load_machine_spec(JsonView(doc, "calibration.json", ""));
  REQUIRE(spec.node.gpus == 4);
  CHECK(spec.node.nics == 4);
  const auto topology = scenario::build_topology(spec, 8);
  REQUIRE(topology->node_count() == 2);
  auto route = [&](topo::GpuId src, topo::GpuId dst) {
    std::vector<topo::LinkId> links;
    topology->route(src, dst, 1, nullptr, links);
    return links;
  };
  const auto inside = route(0, 1), across = route(1, 5);
  CHECK(topology->latency_s(inside) == Approx(topology->latency_s(across)).epsilon(1e-12));
  CHECK(topology->latency_s(across) == Approx(2 * spec.node.nic_latency_s).epsilon(1e-12));
  // Every link of both routes runs at the per-rank bandwidth: a rank has as much inside a node as out.
  for (const auto* r : {&inside, &across})
    for (auto id : *r) CHECK(topology->links()[id].bandwidth_Bps == Approx(1e9).epsilon(1e-6));
  // The step overhead is the calibrated one: the reshaping touches only the node.
  CHECK(doc["collectives"] == calibrated["collectives"]);
}

TEST_CASE("kinds that cost differently per step get their own rows, loaded back as step costs", "[unit]") {
  // All-reduce steps cost 30 us at 1 GB/s; all-gather and reduce-scatter steps 10 us at 2 GB/s.
  emu::Microbench bench;
  bench.host = "testhost";
  bench.ranks = 4;
  for (double s : {8.0, 1e6, 8e6}) bench.samples.push_back({"pingpong", 2, 1, s, 4e-6 + s / 5e9});
  for (const char* kind : {"all_reduce", "all_gather", "reduce_scatter"})
    for (std::uint32_t p : {2u, 4u})
      for (double s : {65536.0, 524288.0, 4e6, 32e6}) {
        const bool ar = std::string(kind) == "all_reduce";
        const auto k = ar                                  ? schedule::CollKind::AllReduce
                       : std::string(kind) == "all_gather" ? schedule::CollKind::AllGather
                                                           : schedule::CollKind::ReduceScatter;
        bench.samples.push_back({kind, p, 4 / p, s,
                                 schedule::ring_steps(k, p) * (ar ? 30e-6 : 10e-6) +
                                     schedule::ring_wire_bytes(k, p, s) / (ar ? 1e9 : 2e9)});
      }
  const auto fit = validate::fit_host(bench);
  REQUIRE(fit.kinds.size() == 18);  // 3 kinds x 2 bands, over every group size and for each of 2 and 4
  CHECK(fit.kinds_rms_relative_error < 1e-6);
  CHECK(fit.sized_rms_relative_error < 1e-6);
  CHECK(fit.collectives.rms_relative_error > 0.05);  // one fit for all kinds cannot fit both
  for (const auto& k : fit.kinds) {
    const bool ar = k.kind == "all_reduce";
    CHECK(k.fit.latency_s == Approx(ar ? 30e-6 : 10e-6).epsilon(1e-6));
    CHECK(k.fit.bandwidth_Bps == Approx(ar ? 1e9 : 2e9).epsilon(1e-6));
  }
  const auto doc = nlohmann::json::parse(validate::machine_json(fit, bench).dump());
  const auto spec = scenario::load_machine_spec(JsonView(doc, "calibration.json", ""));
  REQUIRE(spec.step_costs.size() == 18);
  const auto* small_ag = collectives::find_step_cost(spec.step_costs, schedule::CollKind::AllGather, 65536, 4);
  REQUIRE(small_ag != nullptr);
  CHECK(small_ag->up_to_bytes == validate::kSmallBandBytes);
  // A step pays two NIC latencies plus the row's overhead; the row's bandwidth is a share of the NIC's.
  CHECK(2 * spec.node.nic_latency_s + small_ag->step_overhead_s == Approx(10e-6).epsilon(1e-6));
  CHECK(small_ag->bandwidth_scale * spec.node.nic_bandwidth_Bps == Approx(2e9).epsilon(1e-6));
}

TEST_CASE("a group size whose steps cost more than the others' gets rows of its own", "[unit]") {
  // 2-member rings pay 50 us a step, 4-member rings 10 us: rows over every size cannot fit both.
  auto bench = synthetic_host();
  for (auto& s : bench.samples) {
    const auto kind = schedule::coll_kind_of(s.kind);
    if (kind && s.group == 2) s.time_s += schedule::ring_steps(*kind, 2) * 40e-6;
  }
  const auto fit = validate::fit_host(bench);
  CHECK(fit.kinds_rms_relative_error > 0.05);
  CHECK(fit.sized_rms_relative_error < 1e-6);
  const auto doc = nlohmann::json::parse(validate::machine_json(fit, bench).dump());
  const auto spec = scenario::load_machine_spec(JsonView(doc, "calibration.json", ""));
  // Each sized row prices its own points: steps x (two NIC latencies + overhead) + wire bytes / bandwidth.
  for (const auto& sample : bench.samples) {
    const auto kind = schedule::coll_kind_of(sample.kind);
    if (!kind) continue;
    const auto* row = collectives::find_step_cost(spec.step_costs, *kind, sample.bytes, sample.group);
    REQUIRE(row != nullptr);
    CHECK(row->members == sample.group);
    const double predicted =
        schedule::ring_steps(*kind, sample.group) * (2 * spec.node.nic_latency_s + row->step_overhead_s) +
        schedule::ring_wire_bytes(*kind, sample.group, sample.bytes) /
            (spec.node.nic_bandwidth_Bps * row->bandwidth_scale);
    CHECK(predicted == Approx(sample.time_s).epsilon(1e-6));
  }
}

TEST_CASE("a band whose own fit gives no plausible bandwidth keeps the machine's and fits its latency", "[unit]") {
  // Two points of one step count cannot separate latency from bandwidth well; these two even fit a
  // negative slope (the larger buffer faster), which is no bandwidth.
  const std::vector<validate::FitPoint> pts = {{2, 65536, 100e-6}, {2, 524288, 90e-6}};
  const auto fit = validate::fit_latency_given_bandwidth(pts, 1e10);
  CHECK(fit.bandwidth_Bps == 1e10);
  CHECK(fit.latency_s > 0);
  CHECK(fit.latency_s < 50e-6);
  CHECK_THROWS_AS(validate::fit_latency_given_bandwidth({}, 1e9), std::invalid_argument);
}

TEST_CASE("the emulated GPU's cost per op is the median excess of the kernel points", "[unit]") {
  auto bench = synthetic_host();
  bench.samples.push_back({"kernel", 1, 4, 0, 3e-6, 0});
  bench.samples.push_back({"kernel", 1, 4, 0, 24e-6, 20e-6});
  bench.samples.push_back({"kernel", 1, 4, 0, 205e-6, 200e-6});  // one late point does not set it
  const auto fit = validate::fit_host(bench);
  CHECK(fit.kernel_overhead_s == Approx(4e-6).epsilon(1e-9));
  CHECK(fit.kernel_points == 3);
  CHECK(fit.collectives.points == 18);  // kernel points are not collective points
  const auto machine = validate::machine_json(fit, bench);
  CHECK(machine["sources"]["emulated_kernel_overhead_s"].get<double>() == Approx(4e-6));
  // Round trip through the samples file.
  const auto back = emu::microbench_from_json(emu::to_json(bench), "samples.json");
  CHECK(back.samples.back().op_s == 200e-6);
  CHECK(validate::fit_host(back).kernel_overhead_s == Approx(4e-6).epsilon(1e-9));
}
