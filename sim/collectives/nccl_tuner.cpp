#include "sim/collectives/nccl_tuner.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace exasim::collectives {

namespace {

using schedule::CollKind;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::size_t node_row(std::uint32_t nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }

/// [NC1] NCCL 2.30.7 (NVIDIA/nccl 5067397, src/graph/tuning.cc L146-176): base latencies and hardware latencies
/// per hop, NVLink and network, for Tree and Ring, protocols LL, LL128, Simple.
void set_nccl_latencies(NcclProfile& p) {
  p.base_us = {{{6.8, 14, 8.4}, {6.6, 14, 8.4}}};
  p.intra_hw_us = {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}}};
  p.net_hw_us = {{{5.0, 8.5, 14}, {2.7, 4.0, 14}}};
}

constexpr const char* kSliceSource =
    "read off [NC5]'s 8 x A100 all-reduce curve: beyond NCCL's latency + size / 240 GB/s it took 99, 292 and "
    "319 us more at 16 MiB, 128 MiB and 1 GiB, i.e. 13 ring steps of min(S / (8 x 24 channels), ~230-250 KiB) "
    "at 10 GB/s a channel; estimate, unconfirmed for other GPUs and for RCCL";

/// A profile called `name`, from `source`, with what every shipped profile shares.
NcclProfile profile(std::string name, std::string source) {
  NcclProfile p;
  p.name = std::move(name);
  p.source = std::move(source);
  p.pipeline_slice_source = kSliceSource;
  return p;
}

/// [NC1] L177-211, Ampere's row (RCCL on MI200 keeps NCCL's tables: its release is NCCL 2.21.5's).
void set_ampere_caps(NcclProfile& p) {
  p.ll_max_GBps = {87.7, 22.5, 19.0};
  p.ring_ll128_per_channel_GBps = 20;
  p.tree_ll128_per_channel_GBps = {20, 20, 20};
  p.tree_per_channel_GBps = {24, 23.6, 17.8};
}

std::vector<NcclProfile> build_profiles() {
  std::vector<NcclProfile> out;
  {
    NcclProfile p = profile(
        "nccl-ampere",
        "[NC1] NCCL 2.30.7 tuning.cc (latencies L146-176, Ampere caps L177-211; llMax between nodes by CPU vendor: "
        "the AMD EPYC of a DGX A100 takes the Ampere row, L267-272; network overhead 2 us on AMD CPUs); "
        "NVLink3 seen at 20 GB/s per 25 GB/s link ([NC2] topo.h L17-35); 24 channels on 8 x A100 NVSwitch "
        "([NC6]); execution channels doubled per rail ([NC2] connect.cc L460)");
    set_nccl_latencies(p);
    p.net_overhead_us = 2;
    set_ampere_caps(p);
    p.intra_efficiency = 20.0 / 25.0;
    p.intra_channels = 24;
    out.push_back(p);
  }
  {
    NcclProfile p = profile(
        "nccl-hopper",
        "[NC1] NCCL 2.30.7 tuning.cc (latencies L146-176, Hopper caps L177-211; llMax between nodes by CPU vendor: "
        "the Intel Xeon of a DGX H100 takes the Volta row, L267-272; network overhead 1 us on Intel CPUs); "
        "NVLink4 seen at 20.6 GB/s per 25 GB/s link ([NC2] topo.h L17-35); 16 channels on one node (NVLS's "
        "count on Hopper, [NC2] nvls.cc L155-213, the low end of the 16-32 CTAs NCCL takes on H100); "
        "channels doubled per rail between nodes ([NC2] connect.cc L478-481)");
    set_nccl_latencies(p);
    p.net_overhead_us = 1;
    p.ll_max_GBps = {141, 39, 20.4};
    p.ring_ll128_per_channel_GBps = 36.7;
    p.tree_ll128_per_channel_GBps = {36.7, 36.7, 29};
    p.tree_per_channel_GBps = {38.7, 41.4, 36};
    p.intra_efficiency = 20.6 / 25.0;
    p.intra_channels = 16;
    // NVLS: 25 us NVLink latency, base 0 ([NC1] L146-176); efficiency 0.85 on Hopper ([NC1] L302-382);
    // 8 channels x 40 GB/s, the search result that gives NCCL's 476 GB/s busBw (uncertain); from 5
    // ranks on, as measured on 8 x H200 ([NC5]).
    p.nvls_supported = true;
    out.push_back(p);
  }
  {
    NcclProfile p = profile(
        "nccl-blackwell",
        "[NC1] NCCL 2.30.7 tuning.cc (latencies L146-176, Blackwell caps L177-211; llMax between nodes: the Volta "
        "row of Intel hosts, L267-272); NVLink5 seen at 40.1 GB/s per 50 GB/s link ([NC2] topo.h L17-35); "
        "channel counts: estimate, unconfirmed (24 on one node as NVLS's, 2 per rail)");
    set_nccl_latencies(p);
    p.net_overhead_us = 1;
    p.ll_max_GBps = {282, 39, 20.4};
    p.ring_ll128_per_channel_GBps = 40;
    p.tree_ll128_per_channel_GBps = {55.6, 31.7, 20};
    p.tree_per_channel_GBps = {70, 42.8, 24};
    p.intra_efficiency = 40.1 / 50.0;
    p.intra_channels = 24;
    out.push_back(p);
  }
  {
    NcclProfile p = profile(
        "rccl-mi200",
        "[NC3] RCCL (ROCm/rccl 0cbce2a, NCCL 2.21.5 base) tuning.cc tuning model 3 of rome_model_74, the Frontier-type "
        "node (L57-60 base latencies, L164-192 hardware latencies and bwRatio; LL128 disabled); xGMI seen at 36 "
        "GB/s per 50 GB/s link (topo.h L31-33); 8 rings over 4 NICs (rome_models.cc L523-534), channel "
        "multiplier >= 4 on gfx90a (init.cc L1471-1484); llMax: NCCL's Ampere row (AMD EPYC host, estimate, "
        "unconfirmed for RCCL); network overhead 2 us (AMD CPU)");
    // RCCL keeps one base per protocol for tree and ring; LL128 is off, its entries mirror Simple.
    p.base_us = {{{12, 12, 17}, {12, 12, 17}}};
    p.intra_hw_us = {{{0.8, 2.5, 2.5}, {0.8, 3.6, 3.6}}};
    p.net_hw_us = {{{12.5, 22.4, 22.4}, {9.5, 19.8, 19.8}}};
    p.net_overhead_us = 2;
    set_ampere_caps(p);
    p.ll128 = false;
    p.intra_efficiency = 36.0 / 50.0;
    p.intra_channels = 16;
    p.tree_simple_ratio_2_nodes = 1.75;
    p.tree_simple_ratio_more = 0.96;
    p.ll_ratio = 0.20;
    p.tree_size_correction = false;
    out.push_back(p);
  }
  return out;
}

/// NCCL's log2i: floor(log2(x)) for x >= 1.
std::uint32_t floor_log2(std::uint32_t x) { return static_cast<std::uint32_t>(std::bit_width(x)) - 1; }

}  // namespace

std::string_view to_string(NcclAlgo algo) {
  switch (algo) {
    case NcclAlgo::Tree: return "tree";
    case NcclAlgo::Ring: return "ring";
    case NcclAlgo::Nvls: return "nvls";
  }
  return "?";
}

std::string_view to_string(NcclProto proto) {
  switch (proto) {
    case NcclProto::LL: return "LL";
    case NcclProto::LL128: return "LL128";
    case NcclProto::Simple: return "Simple";
  }
  return "?";
}

const std::vector<NcclProfile>& nccl_profiles() {
  static const std::vector<NcclProfile> profiles = build_profiles();
  return profiles;
}

std::optional<NcclProfile> find_nccl_profile(std::string_view name) {
  for (const auto& p : nccl_profiles())
    if (p.name == name) return p;
  return std::nullopt;
}

std::string nccl_profile_names() {
  std::string names;
  for (const auto& p : nccl_profiles()) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

std::string default_nccl_profile(std::string_view device) {
  // RCCL on every AMD part; its MI200 model stands in for MI300X / MI325X until a CDNA3 profile exists.
  if (device.substr(0, 6) == "mi250x" || device.substr(0, 5) == "mi210" || device.substr(0, 6) == "mi300x" ||
      device.substr(0, 6) == "mi325x")
    return "rccl-mi200";
  if (device.substr(0, 4) == "a100") return "nccl-ampere";
  if (device.substr(0, 4) == "b200" || device.substr(0, 4) == "b100" || device.substr(0, 5) == "gb200")
    return "nccl-blackwell";
  return "nccl-hopper";
}

double nccl_simple_bus_Bps(const TunerInputs& in, double intra_efficiency, double network_efficiency) {
  const double intra = in.intra_Bps * intra_efficiency, net = in.rails * in.nic_Bps * network_efficiency;
  if (in.nodes <= 1) return intra;
  return in.intra_Bps > 0 ? std::min(intra, net) : net;
}

double nccl_tree_correction(NcclProto proto, double bytes) {
  // [NC1] NCCL 2.30.7 tuning.cc L623-628, treeCorrectionFactor[protocol][log2(nBytes / 64)]: the end points
  // (Simple 0.9 up to 8 KiB, 0.5 for 128 KiB - 1 MiB, 0.9 at 128-256 MiB; LL 0.4 at 256-512 KiB; nothing
  // from 512 MiB) are those docs/collectives.md quotes; the values between them as the table reads.
  static constexpr double kFactor[kNcclProtos][23] = {
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
  if (!(bytes >= 64)) return kFactor[static_cast<int>(proto)][0];
  const double index = std::floor(std::log2(bytes / 64));
  if (index >= 23) return 1.0;
  return kFactor[static_cast<int>(proto)][static_cast<int>(index)];
}

bool nccl_applies(const NcclProfile& profile, NcclAlgo algo, const TunerInputs& in) {
  if (in.n < 2) return false;
  switch (algo) {
    case NcclAlgo::Ring: return true;
    case NcclAlgo::Tree: return profile.tree && in.kind == CollKind::AllReduce && in.nodes > 1;
    case NcclAlgo::Nvls:
      return profile.nvls && in.kind == CollKind::AllReduce && in.nodes <= 1 && in.n >= profile.nvls_min_ranks;
  }
  return false;
}

NcclCost nccl_cost(const NcclProfile& profile, NcclAlgo algo, NcclProto proto, const TunerInputs& in) {
  NcclCost c;
  c.algo = algo;
  c.proto = proto;
  c.time_s = kInf;
  if (!nccl_applies(profile, algo, in) || (proto == NcclProto::LL128 && !profile.ll128)) return c;
  if (algo == NcclAlgo::Nvls) {  // Simple only; one node
    if (proto != NcclProto::Simple) return c;
    const double ch = profile.nvls_channels;
    c.channels = profile.nvls_channels;
    c.bus_Bps = ch * profile.nvls_channel_GBps * profile.nvls_efficiency * (ch - 1) / ch * 2 * 1e9;
    c.latency_s = profile.nvls_latency_us * 1e-6;
    c.algorithm_Bps = c.bus_Bps * in.n / ring_steps(in.kind, in.n);
    c.time_s = c.latency_s + in.bytes / c.algorithm_Bps;
    return c;
  }
  const auto a = static_cast<std::size_t>(algo);
  const auto pr = static_cast<std::size_t>(proto);
  const std::size_t row = node_row(in.nodes);
  const std::uint32_t N = std::max(1u, in.nodes);
  const std::uint32_t ppn = std::max(1u, in.n / N);

  // Bus bandwidth of the Simple protocol (GB/s): the fabric as the library sees it, and between nodes
  // the NIC rails.
  double bus = nccl_simple_bus_Bps(in, profile.intra_efficiency, profile.network_efficiency) / 1e9;
  c.channels = N == 1 ? profile.intra_channels : profile.channels_per_rail * std::max(1u, in.rails);
  const double ch = c.channels;
  const double ll_max = profile.ll_max_GBps[row];
  if (algo == NcclAlgo::Ring) {
    if (proto == NcclProto::LL) bus = std::min(ll_max, 0.5 * bus) * profile.ll_ratio;
    if (proto == NcclProto::LL128) bus = std::min(0.92 * bus, ch * profile.ring_ll128_per_channel_GBps);
  } else {
    if (proto == NcclProto::Simple) {
      bus = std::min(0.92 * bus, ch * profile.tree_per_channel_GBps[row]);
      bus *= N == 2 ? profile.tree_simple_ratio_2_nodes : profile.tree_simple_ratio_more;
    }
    if (proto == NcclProto::LL) bus = std::min(bus / 3.8, ll_max) * profile.ll_ratio;
    if (proto == NcclProto::LL128) bus = std::min(bus * 120.0 / 128.0, ch * profile.tree_ll128_per_channel_GBps[row]);
    if (profile.tree_size_correction) bus *= nccl_tree_correction(proto, in.bytes);
  }
  if (!(bus > 0)) return c;

  // Latency (us).
  const double intra = profile.intra_hw_us[a][pr], net = profile.net_hw_us[a][pr];
  double lat = profile.base_us[a][pr];
  if (algo == NcclAlgo::Ring) {
    const std::uint32_t nsteps = ring_steps(in.kind, in.n);
    const std::uint32_t inter = N > 1 ? (in.kind == CollKind::AllReduce ? 2 * (N - 1) : N - 1) : 0;
    const double overhead = N > 1 ? profile.net_overhead_us * (proto == NcclProto::Simple ? 3 : 1) : 0;
    lat += (nsteps - inter) * std::max(intra, overhead) + inter * net;
    if (proto == NcclProto::Simple && in.kind == CollKind::AllReduce && N > 1 && in.bytes / (ch * in.n) >= 64)
      lat *= profile.ring_simple_multinode_factor;
    c.algorithm_Bps = bus * 1e9 * in.n / nsteps;
  } else {
    lat += 2 * ((ppn - 1) * intra + floor_log2(N) * net);
    c.algorithm_Bps = bus * 1e9 * 0.5;
  }
  c.bus_Bps = bus * 1e9;
  c.latency_s = lat * 1e-6;
  c.time_s = c.latency_s + in.bytes / c.algorithm_Bps;
  return c;
}

double nccl_pipeline_s(const NcclProfile& profile, const NcclCost& cost, const TunerInputs& in) {
  if (in.n < 2 || !(cost.bus_Bps > 0) || cost.channels == 0) return 0;
  const std::uint32_t N = std::max(1u, in.nodes);
  const std::uint32_t ppn = std::max(1u, in.n / N);
  // NVLS: one step through the switch, reduce up and multicast down.
  const std::uint32_t steps = cost.algo == NcclAlgo::Ring   ? ring_steps(in.kind, in.n)
                              : cost.algo == NcclAlgo::Nvls ? 2
                                                            : 2 * floor_log2(N) + 2 * (ppn - 1);
  if (steps < 2) return 0;
  const double channels = cost.channels;
  const double slice = std::min(in.bytes / (in.n * channels), profile.pipeline_slice_bytes);
  return (steps - 1) * slice / (cost.bus_Bps / channels);
}

NcclCost nccl_choose(const NcclProfile& profile, const TunerInputs& in) {
  NcclCost best;
  best.time_s = kInf;
  for (NcclAlgo a : {NcclAlgo::Tree, NcclAlgo::Ring, NcclAlgo::Nvls})
    for (NcclProto p : {NcclProto::LL, NcclProto::LL128, NcclProto::Simple}) {
      const NcclCost c = nccl_cost(profile, a, p, in);
      if (c.time_s < best.time_s) best = c;
    }
  if (best.time_s == kInf) {  // a group of one: nothing to send
    best = NcclCost{};
  }
  return best;
}

}  // namespace exasim::collectives
