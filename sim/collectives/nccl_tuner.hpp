#pragma once
// `collectives.algorithm: nccl`: the choice NCCL (RCCL on AMD) makes for one collective, and the latency
// and bandwidth its own cost model gives that choice. NCCL picks, per collective, the (algorithm,
// protocol) pair of least
//     t = latency + nBytes / algorithm bandwidth
// from tables it fills at init (src/graph/tuning.cc); this file is that rule, with the constants of the
// library version a profile names (docs/collectives.md, "nccl", has every table with its source).
//
// What a profile is: the constants of one library release on one GPU generation (NCCL 2.30 on Ampere,
// Hopper or Blackwell; RCCL of ROCm 6.2 on MI200 with its "tuning model 3" of Frontier-type nodes).
//
// The machine enters through four figures (TunerInputs): the physical bandwidth one GPU has into its
// node's fabric (an NVSwitch port, an xGMI link), the NIC rails the group's node members send through
// and their rate, and the members' layout (n ranks, N nodes, ppn = n / N). The library's bandwidth tables
// see the fabric at the rate it assumes for a link (NCCL: 20 GB/s per NVLink3 link for 25 physical, 20.6
// per NVLink4 link; RCCL: 36 GB/s per xGMI link for 50): `intra_efficiency` is that ratio.
//
// Bus bandwidth (nccl-tests' busBw, per rank) the tuner gives each algorithm x protocol:
//   B      = N == 1 ? B_intra : min(B_intra, rails x NIC rate)        (Simple; B_intra = fabric x eff.)
//   ring   Simple B;  LL128 0.92 B;  LL min(ll_max, 0.5 B)            (LL: 8 B of flags per 8 B of data)
//   tree   (all-reduce, N > 1) Simple min(0.92 B, ch x tree/ch); LL128 min(120/128 B, ch x treeLL128/ch);
//          LL min(B / 3.8, ll_max); times the tree correction of the message size
//   nvls   (all-reduce, N = 1, Simple) nvls channels x rate x eff. x (ch - 1) / ch x 2
// and the algorithm bandwidth is busBw x n / nsteps for ring (nsteps 2(n-1) all-reduce, n-1 otherwise)
// and busBw / 2 for tree. Latency (us), with intra / net the hardware latency per hop class:
//   ring   base + (nsteps - nInter) x max(intra, netOverhead) + nInter x net, nInter = 2(N-1) or N-1;
//          x 1.4 for a multi-node Simple all-reduce once its per-channel share reaches 64 B per rank
//   tree   base + 2 x ((ppn - 1) x intra + log2(N) x net)
//   nvls   its NVLink hardware latency (25 us; base 0)
// The simulated collective pays, beyond the tuner's time, its pipeline's fill (nccl_pipeline_s): the
// tuner ranks choices, it does not predict a message's time, and it leaves that term out.
//
// LIMITATIONS:
//  - ring, tree, and NVLS for all-reduce inside one Hopper NVSwitch node (5 ranks or more); no
//    NVLSTree (NVLS across nodes), CollNet/SHARP or PAT: a machine that has them runs faster than this
//    predicts for the collectives NCCL would give them; NVLS's 8 channels x 40 GB/s are the graph
//    search's result the reference derives (uncertain), and Blackwell's NVLS is left off (its channel
//    rate is not known here);
//  - channel counts are the profile's (per node kind, not searched over the node's PCIe/NVLink graph as
//    NCCL's topology search does); per-channel caps use them;
//  - RCCL's 27-entry size corrections of its tuning models are not reproduced (their values were not
//    retrieved): RCCL profiles apply the bwRatio multipliers only;
//  - one profile per run: a machine with mixed nodes or a library of another era needs its own profile;
//  - the tuner's figures are the library's model, not a measurement: validate/collectives/ says how far
//    they land from published nccl-tests curves. Its latencies are far below measured small-message
//    times on A100 (15 us against 44 us at 32 KiB) and above them on MI250X (48 against 25 us);
//  - the pipeline slice (256 KiB) is read off one measured curve (8 x A100 all-reduce, [NC5]: the
//    time beyond latency + size / bandwidth grows with the message up to ~0.3 ms, then stays); every
//    profile uses it (estimate, unconfirmed elsewhere).

#include "sim/schedule/plan.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::collectives {

enum class NcclAlgo : std::uint8_t { Tree, Ring, Nvls };  ///< NCCL's own order: a tie goes to the first
enum class NcclProto : std::uint8_t { LL, LL128, Simple };
inline constexpr int kNcclAlgos = 2;
inline constexpr int kNcclProtos = 3;

[[nodiscard]] std::string_view to_string(NcclAlgo algo);
[[nodiscard]] std::string_view to_string(NcclProto proto);

/// The constants of one library release on one GPU generation. Latencies in microseconds, bandwidths in
/// GB/s as the library writes them; per-node-count tables are indexed by min(N, 3) - 1: 1 node, 2, >= 3
/// (NCCL's "1 / 2 / >= 4" rows; it uses the >= 4 row from 3 nodes on).
struct NcclProfile {
  std::string name;    ///< "nccl-ampere", "nccl-hopper", "nccl-blackwell", "rccl-mi200"
  std::string source;  ///< release and files the constants come from
  std::array<std::array<double, kNcclProtos>, kNcclAlgos> base_us{};      ///< [algo][proto]
  std::array<std::array<double, kNcclProtos>, kNcclAlgos> intra_hw_us{};  ///< per intra-node hop
  std::array<std::array<double, kNcclProtos>, kNcclAlgos> net_hw_us{};    ///< per network hop
  double net_overhead_us = 1;  ///< per intra step of a multi-node ring (x3 for Simple)
  double ring_simple_multinode_factor = 1.4;
  std::array<double, 3> ll_max_GBps{};  ///< cap of every LL bandwidth
  double ring_ll128_per_channel_GBps = 0;
  std::array<double, 3> tree_ll128_per_channel_GBps{};
  std::array<double, 3> tree_per_channel_GBps{};
  bool ll128 = true;                    ///< whether LL128 is enabled by default
  double intra_efficiency = 0.8;        ///< the library's link rate / the physical link rate
  double network_efficiency = 1.0;      ///< the library's NIC rate / the physical NIC rate
  std::uint32_t intra_channels = 16;    ///< channels on one node
  std::uint32_t channels_per_rail = 2;  ///< channels per NIC rail between nodes
  /// RCCL's bwRatio multipliers: tree Simple on 2 nodes and beyond, every LL (1 where NCCL has none).
  double tree_simple_ratio_2_nodes = 1, tree_simple_ratio_more = 1, ll_ratio = 1;
  bool tree_size_correction = true;  ///< NCCL's tree all-reduce correction by message size
  /// NVLS (NVLink SHARP: the NVSwitch reduces and multicasts) for all-reduce on one node: whether the
  /// release runs it on this generation, and whether this machine has it (an NVSwitch node; set by
  /// the machine loader).
  bool tree = true;  ///< false: the library is held to rings and NVLS (NCCL_ALGO=Ring holds it to rings)
  bool nvls_supported = false;
  bool nvls = false;
  double nvls_latency_us = 25;      ///< NVLS's NVLink hardware latency; its base is 0
  std::uint32_t nvls_channels = 8;  ///< channels x per-channel rate: the graph search's result
  double nvls_channel_GBps = 40;
  double nvls_efficiency = 0.85;     ///< NCCL's NVLS efficiency factor (Hopper)
  std::uint32_t nvls_min_ranks = 5;  ///< NCCL runs NVLS from this many ranks on (measured, [NC5])
  /// Bytes a channel forwards per pipeline step at most: a ring's (tree's) first bytes reach the far end
  /// after its steps - 1 slices, which the tuner's latency + size / bandwidth leaves out.
  double pipeline_slice_bytes = 256 * 1024;
  std::string pipeline_slice_source;
};

/// The shipped profiles, in a fixed order.
[[nodiscard]] const std::vector<NcclProfile>& nccl_profiles();
/// Their names, comma-separated in that order: what `machine.collectives.library` may say.
[[nodiscard]] std::string nccl_profile_names();
/// The profile called `name`, or nullopt.
[[nodiscard]] std::optional<NcclProfile> find_nccl_profile(std::string_view name);
/// The profile a GPU device runs by default: "rccl-mi200" for mi250x*, mi210* and (no MI300 profile is
/// shipped: an estimate) mi300x* and mi325x*, "nccl-ampere" for a100*, "nccl-blackwell" for
/// b200/b100/gb200, "nccl-hopper" otherwise.
[[nodiscard]] std::string default_nccl_profile(std::string_view device_name);

/// What the tuner knows of one collective's group and machine.
struct TunerInputs {
  schedule::CollKind kind = schedule::CollKind::AllReduce;
  double bytes = 0;         ///< nBytes as NCCL counts it: the full buffer (CollStart's bytes)
  std::uint32_t n = 1;      ///< ranks
  std::uint32_t nodes = 1;  ///< N
  double intra_Bps = 0;     ///< physical bandwidth of one GPU into its node's fabric (0: no two share a node)
  std::uint32_t rails = 1;  ///< NICs a node's members send through (1 .. NICs per node)
  double nic_Bps = 0;       ///< physical rate of one NIC
};

/// The Simple protocol's bus bandwidth over the node's fabric and, across nodes, the slower of it and
/// the rails (B/s), each seen at the given fraction of its physical rate: the library's view with the
/// profile's link ratios, the flows' with 1 and 1.
[[nodiscard]] double nccl_simple_bus_Bps(const TunerInputs& in, double intra_efficiency, double network_efficiency);

/// One (algorithm, protocol) as the tuner costs it.
struct NcclCost {
  NcclAlgo algo = NcclAlgo::Ring;
  NcclProto proto = NcclProto::Simple;
  double latency_s = 0;
  double bus_Bps = 0;        ///< busBw the tuner assumes
  double algorithm_Bps = 0;  ///< nBytes / (time - latency)
  double time_s = 0;
  std::uint32_t channels = 1;
};

/// Whether the tuner considers `algo` for this collective: ring always (n >= 2), tree for all-reduce
/// across more than one node, NVLS for all-reduce of nvls_min_ranks or more on one node where the
/// profile has it.
[[nodiscard]] bool nccl_applies(const NcclProfile& profile, NcclAlgo algo, const TunerInputs& in);
/// The tuner's cost of `algo` x `proto` (time_s infinite where it does not apply or is disabled).
[[nodiscard]] NcclCost nccl_cost(const NcclProfile& profile, NcclAlgo algo, NcclProto proto, const TunerInputs& in);
/// The pair of least time, scanning tree before ring and LL, LL128, Simple (a later one must be strictly
/// faster, as in NCCL's loop).
[[nodiscard]] NcclCost nccl_choose(const NcclProfile& profile, const TunerInputs& in);
/// The pipeline's fill and drain beyond the tuner's time: (steps - 1) x one slice at a channel's rate,
/// a slice being min(nBytes / (n x channels), the profile's pipeline_slice_bytes); steps are the ring's
/// nsteps, or the tree's 2 x floor(log2 N) + 2 (ppn - 1). Zero for a group of one.
[[nodiscard]] double nccl_pipeline_s(const NcclProfile& profile, const NcclCost& cost, const TunerInputs& in);
/// NCCL's tree all-reduce bandwidth correction for a message of `bytes` (index log2(bytes / 64); 1 from
/// 512 MiB up).
[[nodiscard]] double nccl_tree_correction(NcclProto proto, double bytes);

}  // namespace exasim::collectives
