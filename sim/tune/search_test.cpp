#include "sim/tune/search.hpp"

#include "sim/gpu/device_loader.hpp"
#include "sim/scenario/schemes/axonn4d_scheme.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/tune/tune_csv.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

using namespace exasim;

namespace {
scenario::Scenario small(std::uint32_t gpus, const std::string& parallel) {
  return scenario::parse_scenario(
      nlohmann::json::parse(R"({"machine": "simple-a100", "model": "gpt-5b", "gpus": )" + std::to_string(gpus) +
                            R"(, "parallel": )" + parallel + R"(, "training": {"global_batch": 512}})"),
      "t.json");
}
/// A plan over one dimension x of 4 ranks: one GEMM kernel of size n^3, `slots` handle slots, no ops yet.
schedule::Plan x4_plan(std::int64_t n, std::uint16_t slots) {
  schedule::Plan plan;
  plan.grid = schedule::ProcessGrid({{"x", 4}});
  plan.kernels = {gpu::gemm(n, n, n, gpu::GemmLayout::NN, gpu::DType::Bf16)};
  plan.streams.resize(1);
  plan.streams[0].slots = slots;
  return plan;
}
}  // namespace

TEST_CASE("every ordered factorisation of the GPU count is a grid, once", "[unit]") {
  // 12 = 2^2 * 3: the exponents of 2 spread over 4 factors in C(5,3) = 10 ways, the 3 in 4 ways: 40.
  const auto grids = scenario::axonn4d_grids(12);
  CHECK(grids.size() == 40);
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>> seen;
  for (const auto& g : grids) {
    CHECK(g.gpus() == 12);
    seen.insert({g.gx, g.gy, g.gz, g.gdata});
  }
  CHECK(seen.size() == grids.size());
  CHECK(scenario::axonn4d_grids(1).size() == 1);
}

TEST_CASE("Spearman's rank correlation: same order 1, reversed -1, ties at their mean rank", "[unit]") {
  CHECK(tune::spearman({1, 2, 3, 4}, {10, 20, 35, 100}) == Approx(1));
  CHECK(tune::spearman({1, 2, 3, 4}, {4, 3, 2, 1}) == Approx(-1));
  // Ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4): cov 4.5 over sqrt(4.5 * 5) (hand calculation).
  CHECK(tune::spearman({1, 2, 2, 3}, {1, 2, 3, 4}) == Approx(4.5 / std::sqrt(4.5 * 5)));
  CHECK(tune::spearman({1}, {2}) == 0);
}

TEST_CASE("a ring inside a node runs at the GPU link, across nodes at the node's NIC share", "[unit]") {
  // simple-a100: 4 GPUs per node linked at 100 GB/s, 4 NICs of 25 GB/s (topologies/presets/simple-a100.json).
  auto s = small(16, R"({"scheme": "axonn4d", "gx": 4, "gdata": 4})");
  tune::AnalyticModel model(s);
  CHECK(model.ring(1, 4).bandwidth_Bps == Approx(100e9));
  // Stride 4: every edge leaves its node; the 4 GPUs of a node share its 4 NICs: 25 GB/s each.
  CHECK(model.ring(4, 4).bandwidth_Bps == Approx(25e9));
  CHECK(model.ring(4, 4).step_latency_s > model.ring(1, 4).step_latency_s);
  CHECK(model.ring(1, 1).step_latency_s == 0);
}

TEST_CASE("the replay overlaps collectives with compute and shares a dimension among those in flight", "[unit]") {
  auto s = small(4, R"({"scheme": "axonn4d", "gx": 4})");
  s.collective_algorithm = collectives::Algorithm::Ring;  // the ring closed form, checked by hand below
  tune::AnalyticModel model(s);
  auto plan = x4_plan(256, 2);
  auto& ops = plan.streams[0].ops;
  const double bytes = 1e9;
  const double kernel_s = gpu::make_gpu_model(s.machine.gpu_choice)->time_s(plan.kernels[0]);
  const auto ring = model.ring(1, 4);
  // Ring all-reduce over 4: 2*3 steps, 2*3/4 of the buffer on the wire per member (plan.hpp).
  const double transfer_s = 1.5 * bytes / ring.bandwidth_Bps, latency_s = 6 * ring.step_latency_s;
  using schedule::OpType;
  SECTION("a kernel, an all-reduce posted, a kernel under it, its wait") {
    ops.push_back({.type = OpType::Compute});
    ops.push_back({.type = OpType::CollStart, .coll = schedule::CollKind::AllReduce, .bytes = bytes});
    ops.push_back({.type = OpType::Compute});
    ops.push_back({.type = OpType::Wait});
    CHECK(model.replay_s(plan) == Approx(kernel_s + std::max(kernel_s, transfer_s + latency_s)));
  }
  SECTION("two all-reduces posted together, the first waited, a kernel, the second waited") {
    ops.push_back({.type = OpType::CollStart, .coll = schedule::CollKind::AllReduce, .slot = 0, .bytes = bytes});
    ops.push_back({.type = OpType::CollStart, .coll = schedule::CollKind::AllReduce, .slot = 1, .bytes = bytes});
    ops.push_back({.type = OpType::Wait, .slot = 0});
    ops.push_back({.type = OpType::Compute});
    ops.push_back({.type = OpType::Wait, .slot = 1});
    // Sharing, both end at 2 transfers + latency (one after the other, the first would end at 1 transfer).
    CHECK(model.replay_s(plan) == Approx(2 * transfer_s + latency_s + kernel_s));
  }
}

TEST_CASE("the search counts every grid once: fitting plus refused by reason", "[unit]") {
  auto s = small(64, R"({"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 8})");
  s.model.layers = 4;
  tune::AnalyticModel model(s);
  const auto result = tune::search_scheme(*scenario::find_scheme("axonn4d"), s, model);
  std::uint64_t refused = 0;
  for (const auto& [reason, n] : result.refused) refused += n;
  CHECK(result.considered == scenario::axonn4d_grids(64).size());
  CHECK(result.fitting + refused == result.considered);
  CHECK(result.fitting == result.ranked.size());
  // gpt-5b has 32 heads: gy = 64 cannot split them.
  CHECK(result.refused.at("parallel.gy") > 0);
  for (std::size_t i = 1; i < result.ranked.size(); ++i)
    CHECK(result.ranked[i - 1].analytic_s <= result.ranked[i].analytic_s);
}

namespace {
/// 8 GPUs of simple-a100, a 4-layer model (16 heads, ffn 4096, seq 512: every tp up to 8 divides them),
/// global batch 8.
scenario::Scenario tiny_megatron(const std::string& width = R"("hidden": 1024, "heads": 16)") {
  return scenario::parse_scenario(nlohmann::json::parse(R"({"machine": "simple-a100",
    "model": {"layers": 4, )" + width + R"(, "seq_len": 512, "vocab": 4096}, "gpus": 8,
    "parallel": {"scheme": "megatron", "tp": 2, "pp": 2, "dp": 2}, "training": {"global_batch": 8}})"),
                                  "t.json");
}
}  // namespace

TEST_CASE("the Megatron search enumerates tp x cp x pp x zero x micro-batch x virtual stages x sp x recompute",
          "[unit]") {
  const auto s = tiny_megatron();
  tune::AnalyticModel model(s);
  const auto result = tune::search_scheme(*scenario::find_scheme("megatron"), s, model);
  // (tp, pp) with tp*pp | 8: 10 ordered pairs. Sequence parallelism doubles those with tp > 1; ZeRO 0-3
  // those with dp > 1, ZeRO 0 alone where dp = 1. dp > 1: (1,1) (1,2) (1,4) once, (2,1) (2,2) (4,1) twice:
  // 9, times 4 stages = 36; dp = 1: (1,8) once, (2,4) (4,2) (8,1) twice: 7; 43 without CP. With cp = 2^b
  // (b = 1..3; 2 cp chunks divide seq 512) every (tp, pp) = (2^a, 2^c) with a + c <= n = 3 - b takes 4 ZeRO
  // stages (dp x cp > 1), twice with tp > 1: 4 (n + 1)^2, so 36 + 16 + 4 = 56. Times 4 micro-batches
  // (divisors of 8), 3 virtual stages (divisors of 4 layers), 3 recompute modes: 99 * 36 = 3564 (hand count).
  CHECK(result.considered == 3564);
  // The CP degrees tried: 1, 2, 4 and 8.
  std::set<std::uint32_t> cps;
  for (const auto& c : result.ranked) cps.insert(scenario::config_as<schedule::MegatronConfig>(*c.config).cp);
  CHECK(cps == std::set<std::uint32_t>{1, 2, 4, 8});
  std::uint64_t refused = 0;
  for (const auto& [reason, n] : result.refused) refused += n;
  CHECK(result.fitting + refused == result.considered);
  CHECK(result.fitting == result.ranked.size());
  // pp = 8 does not divide 4 layers: only (tp 1, pp 8, dp 1), 4 * 3 * 3 = 36 configurations, all blamed on pp.
  CHECK(result.refused.at("parallel.pp") == 36);
  // Interleaving needs pp >= 2 and micro-batches a multiple of pp: refused under virtual_stages.
  CHECK(result.refused.at("parallel.virtual_stages") > 0);
  // dp * micro_batch must divide the batch of 8.
  CHECK(result.refused.at("training.global_batch") > 0);
  for (std::size_t i = 1; i < result.ranked.size(); ++i) {
    CHECK(result.ranked[i - 1].analytic_s <= result.ranked[i].analytic_s);
    CHECK(result.ranked[i].scheme->name == "megatron");
  }
  // Every candidate loads as a scenario: the same checks refused the others.
  const auto best = tune::with_config(s, result.ranked.front());
  CHECK(best.resolved["parallel"]["scheme"] == "megatron");
  CHECK_NOTHROW(scenario::parse_scenario(best.resolved, "best.json"));
}

TEST_CASE("tune.csv reads back what tune wrote, by column name", "[unit]") {
  const auto s = tiny_megatron();
  tune::AnalyticModel model(s);
  const auto result = tune::search(s, model, nullptr);  // every scheme: the mixed layout
  REQUIRE(result.ranked.size() > 2);
  std::vector<tune::TuneRow> rows;
  for (const auto& c : result.ranked) rows.push_back({c, std::nullopt});
  rows.front().simulated = tune::SimulatedFigures{1.5, 40.25, 100, 31.5};
  const auto path = (std::filesystem::temp_directory_path() / "exasim_search_test_tune.csv").string();
  for (const scenario::Scheme* alone :
       {static_cast<const scenario::Scheme*>(nullptr), scenario::find_scheme("axonn4d")}) {
    std::vector<tune::TuneRow> written;
    for (const auto& r : rows)
      if (!alone || r.candidate.scheme == alone) written.push_back(r);
    std::ofstream(path) << tune::write_tune_csv(alone, written);
    const auto back = tune::read_tune_csv(path);
    CHECK(back.alone == alone);
    REQUIRE(back.rows.size() == written.size());
    for (std::size_t i = 0; i < written.size(); ++i) {
      const auto& a = written[i].candidate;
      const auto& b = back.rows[i].candidate;
      CHECK(tune::row_label(a, alone) == tune::row_label(b, alone));
      CHECK(b.analytic_s == a.analytic_s);
      CHECK(b.memory_bytes == a.memory_bytes);
      REQUIRE(back.rows[i].simulated.has_value() == written[i].simulated.has_value());
      if (written[i].simulated) CHECK(back.rows[i].simulated->mfu_percent == written[i].simulated->mfu_percent);
    }
  }
  // By name: the columns in another order read the same.
  std::ofstream(path) << "tflops_per_gpu,percent_of_peak,iteration_time_s,memory_per_gpu_bytes,analytic_iteration_s,"
                         "gdata,gz,gy,gx\n,,,1e9,2.5,8,4,2,1\n";
  const auto reordered = tune::read_tune_csv(path);
  REQUIRE(reordered.rows.size() == 1);
  CHECK(tune::row_label(reordered.rows[0].candidate, reordered.alone) == "gx=1 gy=2 gz=4 gdata=8");
  CHECK(reordered.rows[0].candidate.analytic_s == 2.5);
  CHECK_FALSE(reordered.rows[0].simulated);
  // A table written before mfu_percent was a column: its simulated rows read back with MFU unknown.
  std::ofstream(path) << "gx,gy,gz,gdata,analytic_iteration_s,memory_per_gpu_bytes,iteration_time_s,percent_of_peak,"
                         "tflops_per_gpu\n1,2,4,8,2.5,1e9,2.0,40,120\n";
  const auto older = tune::read_tune_csv(path);
  REQUIRE(older.rows.size() == 1);
  REQUIRE(older.rows[0].simulated);
  CHECK(older.rows[0].simulated->tflops_per_gpu == 120);
  CHECK(older.rows[0].simulated->mfu_percent == -1);
  std::ofstream(path) << "scheme,gx\npipeline,2\n";
  CHECK_THROWS_WITH(tune::read_tune_csv(path), Catch::Contains("line 1: expected the header gx,gy,gz,gdata,"));
  std::filesystem::remove(path);
}

TEST_CASE("the Megatron search refuses what the memory model puts above the GPU's HBM", "[unit]") {
  // 4 layers of 805M parameters (12 h^2 each): 16 B per parameter of weights, gradients and Adam state
  // is 52 GB on one GPU, above the A100's 40 GB without tp, pp or ZeRO to split it.
  const auto s = tiny_megatron(R"("hidden": 8192, "heads": 64)");
  tune::AnalyticModel model(s);
  const auto result = tune::search_scheme(*scenario::find_scheme("megatron"), s, model);
  CHECK(result.refused.at("memory") > 0);
  for (const auto& c : result.ranked) CHECK(c.memory_bytes <= s.machine.gpu_choice.device.hbm_capacity_bytes.value);
}

TEST_CASE("under nccl a collective costs the library tuner's choice, unloaded", "[unit]") {
  auto s = small(16, R"({"scheme": "axonn4d", "gx": 4, "gdata": 4})");
  REQUIRE(s.collective_algorithm == collectives::Algorithm::Nccl);
  tune::AnalyticModel model(s);
  const auto link = model.ring(4, 4);  // one member per node on 4 nodes
  REQUIRE(link.nccl != nullptr);
  CHECK(link.nccl_inputs.nodes == 4);
  auto in = link.nccl_inputs;
  in.kind = schedule::CollKind::AllReduce;
  in.bytes = 1e9;
  const auto choice = collectives::nccl_choose(*link.nccl, in);
  const auto cost = tune::collective_cost(schedule::CollKind::AllReduce, 4, 1e9, link);
  CHECK(cost.latency_s == Approx(choice.latency_s + collectives::nccl_pipeline_s(*link.nccl, choice, in)));
  CHECK(cost.bandwidth_s == Approx(1e9 / choice.algorithm_Bps));
}

TEST_CASE("a calibrated step-cost row prices the collectives it covers in the analytic estimate", "[unit]") {
  tune::RingLink link;
  link.bandwidth_Bps = 1e9;
  link.step_overhead_s = 10e-6;
  link.step_latency_s = 15e-6;  // 5 us of route + the machine's 10 us
  const std::vector<collectives::StepCost> rows = {
      {schedule::CollKind::AllGather, 1 << 20, 40e-6, 0.5},  // small all-gathers: 40 us a step, half the bandwidth
  };
  const auto plain = tune::collective_cost(schedule::CollKind::AllGather, 4, 1 << 20, link);
  link.step_costs = &rows;
  const auto small = tune::collective_cost(schedule::CollKind::AllGather, 4, 1 << 20, link);
  CHECK(small.latency_s == Approx(plain.latency_s * 45.0 / 15.0));  // 3 steps of 5 + 40 us instead of 5 + 10
  CHECK(small.bandwidth_s == Approx(2 * plain.bandwidth_s));
  // Beyond the row's band, and another kind: the machine's step overhead and bandwidth.
  const auto large = tune::collective_cost(schedule::CollKind::AllGather, 4, 4 << 20, link);
  CHECK(large.latency_s == Approx(plain.latency_s));
  const auto reduce = tune::collective_cost(schedule::CollKind::ReduceScatter, 4, 1 << 20, link);
  CHECK(reduce.bandwidth_s == Approx(plain.bandwidth_s));
}
