#include "traces/trace_rates.hpp"

#include <catch2/catch.hpp>

using namespace exasim::trace;

TEST_CASE("bus bandwidth factors are nccl-tests'", "[unit]") {
  CHECK(bus_bandwidth_factor(CollectiveKind::AllReduce, 8) == Approx(14.0 / 8));
  CHECK(bus_bandwidth_factor(CollectiveKind::AllGather, 4) == Approx(0.75));
  CHECK(bus_bandwidth_factor(CollectiveKind::ReduceScatter, 2) == Approx(0.5));
  CHECK(bus_bandwidth_factor(CollectiveKind::Broadcast, 8) == 1);
  CHECK(bus_bandwidth_factor(CollectiveKind::AllReduce, 0) == 1);  // unknown group
}

// Two calls of one bf16 GEMM shape (one of them a GEMM plus its split-K reduction, 7 + 1 us), one
// elementwise op of 3 MiB inputs (bytes = 3 MiB + the 2 MiB largest input as output = 5 MiB in 10 us),
// one SDPA forward [B=2, H=4, L=1024, E=64]: 4 B H L^2 E = 2.147e9 flops in 100 us, and three 1 MB
// all-reduces in a group of 4 (10, 30, 20 us: median 20 us; bus bandwidth 1e6 / 20e-6 x 2 x 3/4).
TEST_CASE("rates: GEMM shapes by median, memory bytes, attention flops, collective bus bandwidth", "[unit]") {
  MeasuredTrace t;
  t.names = {"sm90_xmma_gemm_bf16_tn", "splitKreduce_kernel", "elementwise", "flash_fwd", "ncclDevKernel_AllReduce"};
  auto kernel = [](double dur, KernelClass cls, std::int64_t ext, std::uint32_t name) {
    DeviceKernel k;
    k.dur_us = dur;
    k.cls = cls;
    k.external_id = ext;
    k.name = name;
    return k;
  };
  t.kernels = {kernel(7, KernelClass::Gemm, 1, 0),        kernel(1, KernelClass::Gemm, 1, 1),
               kernel(9, KernelClass::Gemm, 2, 0),        kernel(10, KernelClass::Memory, 3, 2),
               kernel(100, KernelClass::Attention, 4, 3), kernel(3, KernelClass::Gemm, 99, 0)};
  for (double dur : {10.0, 30.0, 20.0}) {
    auto k = kernel(dur, KernelClass::Collective, -1, 4);
    k.coll = CollectiveKind::AllReduce;
    k.bytes = 1e6;
    k.group_size = 4;
    t.kernels.push_back(k);
  }
  OpShape mm;
  mm.op = "aten::mm";
  mm.m = 1024, mm.n = 512, mm.k = 256;
  mm.dtype = "c10::BFloat16";
  t.op_shapes[1] = mm;
  t.op_shapes[2] = mm;
  OpShape add;
  add.op = "aten::add";
  add.input_bytes = 3 << 20;
  add.largest_input_bytes = 2 << 20;
  t.op_shapes[3] = add;
  OpShape sdpa;
  sdpa.op = "aten::_scaled_dot_product_flash_attention";
  sdpa.first_dims = {2, 4, 1024, 64};
  sdpa.dtype = "c10::BFloat16";
  t.op_shapes[4] = sdpa;

  const auto r = measure_rates({t});
  REQUIRE(r.gemms.size() == 1);
  CHECK(r.gemms[0].m == 1024);
  CHECK(r.gemms[0].dtype == "bf16");
  CHECK(r.gemms[0].layout == "TN");
  CHECK(r.gemms[0].count == 2);
  CHECK(r.gemms[0].time_s == Approx(8.5e-6));  // median of 8 and 9 us
  CHECK(r.gemm_kernels_without_shape == 1);    // external id 99 has no recorded op
  CHECK(r.memory.ops == 1);
  CHECK(r.memory.work == 5 << 20);
  CHECK(r.memory.rate() == Approx((5 << 20) / 10e-6));
  CHECK(r.attention.work == Approx(4.0 * 2 * 4 * 1024 * 1024 * 64));
  CHECK(r.attention.dtype == "bf16");
  REQUIRE(r.collectives.size() == 1);
  CHECK(r.collectives[0].count == 3);
  CHECK(r.collectives[0].time_s == Approx(20e-6));
  CHECK(r.collectives[0].bus_bandwidth_Bps == Approx(1e6 / 20e-6 * 1.5));
}
