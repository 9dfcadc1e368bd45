// `collectives.algorithm: nccl`: the tuner's closed forms on hand-checked cases, and the routed
// channels over every NIC rail.
#include "sim/collectives/internal/nccl_route.hpp"
#include "sim/collectives/internal/test_support.hpp"
#include "sim/collectives/nccl_tuner.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>

using namespace exasim;
using namespace exasim::collectives;
using namespace exasim::collectives::testing;

namespace {

constexpr double GiB = 1024.0 * 1024 * 1024, MiB = 1024.0 * 1024, KiB = 1024.0;

const NcclProfile& profile(const char* name) {
  static std::map<std::string, NcclProfile> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, *find_nccl_profile(name)).first;
  return it->second;
}

/// 8 A100s on one NVSwitch: 12 NVLink3 links of 25 GB/s per GPU.
TunerInputs dgx_a100_node(double bytes, CollKind kind = CollKind::AllReduce) {
  TunerInputs in;
  in.kind = kind;
  in.bytes = bytes;
  in.n = 8;
  in.nodes = 1;
  in.intra_Bps = 300e9;
  return in;
}

/// `nodes` DGX A100 nodes, `ppn` members each (8 HDR NICs of 25 GB/s, one per GPU).
TunerInputs dgx_a100_nodes(std::uint32_t nodes, std::uint32_t ppn, double bytes) {
  TunerInputs in = dgx_a100_node(bytes);
  in.n = nodes * ppn;
  in.nodes = nodes;
  in.intra_Bps = ppn > 1 ? 300e9 : 0;
  in.rails = ppn;
  in.nic_Bps = 25e9;
  return in;
}

}  // namespace

TEST_CASE("nccl tuner: 8 x A100 ring Simple all-reduce as NCCL's model costs it", "[unit]") {
  // docs/collectives.md: busBw 12 x 20 = 240 GB/s; latency 8.4 + 14 x 3.4 = 56 us.
  const NcclCost c = nccl_cost(profile("nccl-ampere"), NcclAlgo::Ring, NcclProto::Simple, dgx_a100_node(GiB));
  CHECK(c.bus_Bps == Approx(240e9));
  CHECK(c.latency_s == Approx(56e-6));
  CHECK(c.algorithm_Bps == Approx(240e9 * 8 / 14));
  CHECK(c.time_s == Approx(56e-6 + GiB / (240e9 * 8 / 14)));
  // The choice at 1 GiB is Simple on a ring (no tree on one node).
  const NcclCost best = nccl_choose(profile("nccl-ampere"), dgx_a100_node(GiB));
  CHECK(best.algo == NcclAlgo::Ring);
  CHECK(best.proto == NcclProto::Simple);
}

TEST_CASE("nccl tuner: small messages take LL, at NCCL's 15 us", "[unit]") {
  // LL ring: 6.6 + 14 x 0.6 = 15 us; bandwidth min(llMax 87.7, 0.5 x 240).
  const NcclCost c = nccl_choose(profile("nccl-ampere"), dgx_a100_node(1 * KiB));
  CHECK(c.algo == NcclAlgo::Ring);
  CHECK(c.proto == NcclProto::LL);
  CHECK(c.latency_s == Approx(15e-6));
  CHECK(c.bus_Bps == Approx(87.7e9));
  // LL128 in between: 14 + 14 x 1.9 = 40.6 us, 0.92 x 240 GB/s; it beats both somewhere in 1-64 MiB.
  bool ll128_seen = false;
  for (double s = 64 * KiB; s <= 256 * MiB; s *= 2)
    ll128_seen = ll128_seen || nccl_choose(profile("nccl-ampere"), dgx_a100_node(s)).proto == NcclProto::LL128;
  CHECK(ll128_seen);
}

TEST_CASE("nccl tuner: many nodes pick the tree for mid-size all-reduce, the ring for large ones", "[unit]") {
  // 1,024 nodes, one member each: a ring pays 2 x 1,023 network steps of latency; a tree 2 x 10.
  const auto& p = profile("nccl-ampere");
  const NcclCost small = nccl_choose(p, dgx_a100_nodes(1024, 1, 4 * MiB));
  CHECK(small.algo == NcclAlgo::Tree);
  const NcclCost ring = nccl_cost(p, NcclAlgo::Ring, small.proto, dgx_a100_nodes(1024, 1, 4 * MiB));
  CHECK(ring.latency_s > 20 * small.latency_s);
  // Tree latency: base + 2 x (0 x intra + log2(1024) x net).
  const NcclCost tree = nccl_cost(p, NcclAlgo::Tree, NcclProto::Simple, dgx_a100_nodes(1024, 1, 4 * MiB));
  CHECK(tree.latency_s == Approx((8.4 + 2 * 10 * 14) * 1e-6));
  // Two nodes, 8 members each: the ring is cheap in latency and the tree's bandwidth is capped below it.
  const NcclCost two = nccl_choose(p, dgx_a100_nodes(2, 8, 4 * GiB));
  CHECK(two.algo == NcclAlgo::Ring);
  CHECK(two.bus_Bps == Approx(std::min(240e9, 8 * 25e9)));
  // Trees never run all-gather, nor on one node.
  TunerInputs ag = dgx_a100_nodes(16, 8, 4 * MiB);
  ag.kind = CollKind::AllGather;
  CHECK_FALSE(nccl_applies(profile("nccl-ampere"), NcclAlgo::Tree, ag));
  CHECK_FALSE(nccl_applies(profile("nccl-ampere"), NcclAlgo::Tree, dgx_a100_node(MiB)));
}

TEST_CASE("nccl pipeline fill: steps - 1 slices at a channel's rate", "[unit]") {
  const auto& p = profile("nccl-ampere");
  // 8 x A100, 1 GiB: 13 steps of a full 256 KiB slice at 240 / 24 = 10 GB/s a channel.
  const NcclCost big = nccl_cost(p, NcclAlgo::Ring, NcclProto::Simple, dgx_a100_node(GiB));
  CHECK(nccl_pipeline_s(p, big, dgx_a100_node(GiB)) == Approx(13 * 256 * KiB / 10e9));
  // 16 MiB: the slice is the message's share, 16 MiB / (8 ranks x 24 channels).
  const NcclCost mid = nccl_cost(p, NcclAlgo::Ring, NcclProto::Simple, dgx_a100_node(16 * MiB));
  CHECK(nccl_pipeline_s(p, mid, dgx_a100_node(16 * MiB)) == Approx(13 * (16 * MiB / 192) / 10e9));
}

TEST_CASE("nccl tuner: the tree correction by message size", "[unit]") {
  CHECK(nccl_tree_correction(NcclProto::Simple, 1 * KiB) == Approx(0.9));
  CHECK(nccl_tree_correction(NcclProto::Simple, 128 * KiB) == Approx(0.5));
  CHECK(nccl_tree_correction(NcclProto::Simple, 1 * MiB) == Approx(0.5));
  CHECK(nccl_tree_correction(NcclProto::Simple, 128 * MiB) == Approx(0.9));
  CHECK(nccl_tree_correction(NcclProto::LL, 256 * KiB) == Approx(0.4));
  CHECK(nccl_tree_correction(NcclProto::Simple, 512 * MiB) == Approx(1.0));
  CHECK(nccl_tree_correction(NcclProto::Simple, 16 * GiB) == Approx(1.0));
}

TEST_CASE("nccl tuner: RCCL has no LL128 and its own latencies", "[unit]") {
  const auto& r = profile("rccl-mi200");
  TunerInputs in = dgx_a100_node(MiB);
  in.intra_Bps = 50e9;
  CHECK(std::isinf(nccl_cost(r, NcclAlgo::Ring, NcclProto::LL128, in).time_s));
  // Ring Simple on one node of 8: 17 + 14 x 3.6 us.
  CHECK(nccl_cost(r, NcclAlgo::Ring, NcclProto::Simple, in).latency_s == Approx((17 + 14 * 3.6) * 1e-6));
  CHECK(nccl_cost(r, NcclAlgo::Ring, NcclProto::Simple, in).bus_Bps == Approx(36e9));
}

TEST_CASE("nccl profiles: names, defaults per GPU, lookups", "[unit]") {
  CHECK(default_nccl_profile("a100-80gb") == "nccl-ampere");
  CHECK(default_nccl_profile("h100-sxm") == "nccl-hopper");
  CHECK(default_nccl_profile("gh200") == "nccl-hopper");
  CHECK(default_nccl_profile("mi250x-gcd") == "rccl-mi200");
  CHECK(default_nccl_profile("mi300x") == "rccl-mi200");
  CHECK(default_nccl_profile("mi325x") == "rccl-mi200");
  CHECK(default_nccl_profile("b200") == "nccl-blackwell");
  CHECK(default_nccl_profile("gb200") == "nccl-blackwell");
  for (const auto& p : nccl_profiles()) {
    CHECK(find_nccl_profile(p.name).has_value());
    CHECK_FALSE(p.source.empty());
  }
  CHECK_FALSE(find_nccl_profile("nccl-kepler").has_value());
}

TEST_CASE("nccl routing: channels over every NIC rail carry equal shares", "[unit]") {
  // Two nodes of 4 GPUs with 4 NICs: a data-parallel all-reduce over all 8 GPUs.
  const auto machine = simple_a100(2);
  const schedule::ProcessGrid grid({{"x", 8}});
  auto call = testing::call_of(grid, 0, CollKind::AllReduce, 4 * GiB, 0);
  const NcclProfile nccl = *find_nccl_profile("nccl-ampere");
  call.nccl = &nccl;
  REQUIRE(resolve_algorithm(Algorithm::Nccl, machine, call) == Algorithm::Nccl);
  const TunerInputs in = nccl_inputs(machine, call);
  CHECK(in.rails == 4);
  CHECK(in.nodes == 2);
  CHECK(in.nic_Bps == Approx(25e9));
  CHECK(in.intra_Bps == Approx(100e9));
  const NcclCost choice = nccl_choose(nccl, in);
  REQUIRE(choice.algo == NcclAlgo::Ring);
  REQUIRE(choice.proto == NcclProto::Simple);

  auto nic_up_bytes = [&](Algorithm algorithm) {
    const auto stage = route_one(algorithm, machine, call, 0);
    std::map<topo::LinkId, double> bytes;
    for (const auto& hop : stage.hops)
      for (topo::LinkId l : hop.links)
        if (machine.links()[l].cls == topo::LinkClass::NicUp) bytes[l] += stage.route.bundles.at(hop.bundle).bytes;
    return std::make_pair(bytes, stage);
  };
  const auto [nccl_bytes, nccl_stage] = nic_up_bytes(Algorithm::Nccl);
  CHECK(nccl_stage.route.bundles.size() == 4);
  // 8 NIC up-links (4 a node) each carry a quarter of the ring's wire bytes, inflated by the physical
  // bus bandwidth (min(100, 4 x 25) GB/s) over the tuner's (min(0.8 x 100, 100) GB/s).
  const double wire = 2.0 * 7 / 8 * 4 * GiB;
  REQUIRE(nccl_bytes.size() == 8);
  for (const auto& [link, b] : nccl_bytes) CHECK(b == Approx(wire / 4 * 100.0 / 80.0));
  CHECK(nccl_stage.route.rank0_wire_bytes == Approx(wire));
  CHECK(nccl_stage.route.latency_s == Approx(choice.latency_s + nccl_pipeline_s(nccl, choice, in)));
  // The plain ring leaves each node through one NIC.
  CHECK(nic_up_bytes(Algorithm::Ring).first.size() == 2);
}

TEST_CASE("nccl routing: a tree across nodes, one member per node and channel", "[unit]") {
  // 64 nodes of 4 GPUs, one member per node (a data-parallel group under tensor parallelism 4).
  const auto machine = simple_a100(64);
  const schedule::ProcessGrid grid({{"t", 4}, {"d", 64}});
  auto call = testing::call_of(grid, 1, CollKind::AllReduce, 1 * MiB, 0);
  const NcclProfile nccl = *find_nccl_profile("nccl-ampere");
  call.nccl = &nccl;
  const TunerInputs in = nccl_inputs(machine, call);
  REQUIRE(in.nodes == 64);
  REQUIRE(in.rails == 1);
  const NcclCost choice = nccl_choose(nccl, in);
  REQUIRE(choice.algo == NcclAlgo::Tree);
  const auto stage = route_one(Algorithm::Nccl, machine, call, 0);
  REQUIRE(stage.route.bundles.size() == 2);
  // Each tree has 63 edges, routed up then down.
  CHECK(stage.hops.size() == 2 * 2 * 63);
  CHECK(stage.route.bundles[0].bytes == Approx(1 * MiB / 2 * 25e9 / choice.bus_Bps));
  CHECK(stage.route.latency_s == Approx(choice.latency_s + nccl_pipeline_s(nccl, choice, in)));
}

TEST_CASE("nccl: point-to-point and single members stay rings", "[unit]") {
  const auto machine = simple_a100(2);
  const schedule::ProcessGrid grid({{"x", 8}});
  auto call = testing::call_of(grid, 0, CollKind::Send, MiB, 0);
  CHECK(resolve_algorithm(Algorithm::Nccl, machine, call) == Algorithm::Ring);
  CHECK(parse_algorithm("nccl") == Algorithm::Nccl);
  CHECK(to_string(Algorithm::Nccl) == "nccl");
}

TEST_CASE("nccl tuner: NVLS on a Hopper NVSwitch node, from 5 ranks, for large all-reduces", "[unit]") {
  NcclProfile hopper = *find_nccl_profile("nccl-hopper");
  TunerInputs in = dgx_a100_node(16 * GiB);
  in.intra_Bps = 450e9;
  // Not on this machine (the loader sets nvls for NVSwitch nodes): the ring, ~370 GB/s.
  CHECK(nccl_choose(hopper, in).algo == NcclAlgo::Ring);
  CHECK(nccl_choose(hopper, in).bus_Bps == Approx(450e9 * 20.6 / 25));
  hopper.nvls = true;
  const NcclCost big = nccl_choose(hopper, in);
  CHECK(big.algo == NcclAlgo::Nvls);
  // 8 channels x 40 GB/s x 0.85 x 7/8 x 2 = 476 GB/s (the reference's worked check); 25 us.
  CHECK(big.bus_Bps == Approx(476e9));
  CHECK(big.latency_s == Approx(25e-6));
  // Small messages stay on the ring's LL (lower latency); 4 ranks never run NVLS; nor does all-gather.
  in.bytes = 4 * KiB;
  CHECK(nccl_choose(hopper, in).algo == NcclAlgo::Ring);
  in.bytes = 16 * GiB;
  in.n = 4;
  CHECK_FALSE(nccl_applies(hopper, NcclAlgo::Nvls, in));
  in.n = 8;
  in.kind = CollKind::AllGather;
  CHECK_FALSE(nccl_applies(hopper, NcclAlgo::Nvls, in));
}
