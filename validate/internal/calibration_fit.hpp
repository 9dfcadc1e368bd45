#pragma once
// Fits a machine file for the emulation host from its microbenchmarks (`exasim calibrate`).
//
// The host becomes a single_switch machine with one "GPU" per node and one node per rank: each rank
// sends and receives through its own NIC, whose bandwidth is the rank's share of what the host's cores
// and memory copy when every rank copies at once (all_reduce / all_gather / reduce_scatter with every
// group busy; the all-pairs exchange is recorded for information only). That is how the emulated plans
// run (every rank in every collective); a rank running two collectives at once then shares its NIC
// between them, as it shares its core. The latency of one ring step (NIC latencies plus
// collectives.step_overhead_s) is fitted together with the bandwidth: time = steps * L + wire_bytes / B,
// least squares on relative error, so that 64 KiB and 32 MiB points weigh alike.
//
// The machine's one (latency, bandwidth) pair serves every collective kind because the emulator runs every kind as
// a ring of the same step (libnbc's ring all-reduce; ring all-gather and reduce-scatter of
// emu/collectives/ring_collective.hpp): before that, Open MPI's one-round linear all-gather and all-to-all were
// fitted as p-1-step rings and the fit was off by about 30% rms, its step latency a third of what an
// all-reduce step costs.
// The same points are also fitted per kind and per size band (buffers up to 1 MiB, larger ones), written
// as collectives.step_costs rows (sim/collectives/step_costs.hpp): libnbc's all-reduce step and the
// all-gather / reduce-scatter ring step still differ (the one fit was +10% to +34% on all-reduces of
// 4 ranks, -10% to -29% on 64-512 KiB all-gathers), and a small buffer's step costs more than its bytes
// say. A band whose two-parameter fit gives no bandwidth within 0.05-20x the machine's keeps the
// machine's bandwidth and fits its latency alone.
//
// LIMITATIONS:
//  - two size bands only: within a band, buffers that fit the host's caches copy faster than larger
//    ones, and a ring's fixed cost (the skew of its members' wake-ups) is spread over its steps; both
//    show up as residuals (kinds_rms_relative_error);
//  - ranks that copy alone get more than their share on a real host; the model gives them the same B;
//  - a host loaded by other work during calibration gives a slower machine file: calibrate on a quiet
//    host (the microbenchmarks interleave their repetitions, which spreads a short load, no more);
//  - ping-pong figures (one pair, idle host) are recorded as gpu_gpu_* for information only: with one GPU
//    per node no route uses them;
//  - a scenario with several GPUs per node (hierarchical collectives split groups by node) is simulated
//    on machine_with_node_size: the same per-rank bandwidth and step latency whichever "node" a peer
//    is on, since on this host every rank is on the same one.

#include "emu/microbench_samples.hpp"

#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <vector>

namespace exasim::validate {

/// time = steps * latency_s + bytes / bandwidth_Bps
struct LinearFit {
  double latency_s = 0;
  double bandwidth_Bps = 0;
  double rms_relative_error = 0;
  std::size_t points = 0;
};

struct FitPoint {
  double steps = 0;  ///< sequential latency-paying steps
  double bytes = 0;  ///< bytes one rank puts on the wire
  double time_s = 0;
};

/// Least squares on relative error (weights 1/t^2); a negative latency or a non-positive slope (times
/// falling with bytes) refits the bandwidth alone with latency 0. Throws std::invalid_argument with fewer
/// than 2 points or a non-positive time.
[[nodiscard]] LinearFit fit_latency_bandwidth(const std::vector<FitPoint>& points);

/// Fits t = steps * latency + bytes / bandwidth_Bps with the bandwidth given (latency only, clamped at 0).
[[nodiscard]] LinearFit fit_latency_given_bandwidth(const std::vector<FitPoint>& points, double bandwidth_Bps);

/// Buffers up to this size form the small band of the per-kind fits: the latency-bound steps.
inline constexpr double kSmallBandBytes = 1024.0 * 1024.0;

/// One collective kind in one size band, fitted alone (a machine file's collectives.step_costs row):
/// over every group size (members 0), or over the points of one group size.
struct KindBandFit {
  std::string kind;                                              ///< all_reduce, all_gather, reduce_scatter
  double up_to_bytes = std::numeric_limits<double>::infinity();  ///< the band's largest buffer
  std::uint32_t members = 0;                                     ///< the group size; 0: every size
  LinearFit fit;
};

struct HostCalibration {
  LinearFit pingpong;                   ///< one pair, idle host
  LinearFit collectives;                ///< every rank busy: the ring collectives, one fit for every kind
  std::vector<KindBandFit> kinds;       ///< the same points fitted per kind and size band, then per group size
  double kinds_rms_relative_error = 0;  ///< rms error of all ring points under the per-kind rows of every size
  double sized_rms_relative_error = 0;  ///< the same under the rows of each point's own group size
  /// What one emulated compute op (sleep mode) takes beyond its modelled time, the median over the
  /// kernel points; 0 without them. Validation adds it to every simulated kernel (validation.hpp).
  double kernel_overhead_s = 0;
  std::size_t kernel_points = 0;
  double exchange_aggregate_Bps = 0;  ///< host total when all pairs exchange (largest size), information
  double single_pair_Bps = 0;         ///< one pair exchanging (largest size), information
};

[[nodiscard]] HostCalibration fit_host(const emu::Microbench& bench);

/// The machine file (topologies/presets schema) of the host; "gpu" is a placeholder that validation
/// replaces by the scenario's.
[[nodiscard]] nlohmann::ordered_json machine_json(const HostCalibration& fit, const emu::Microbench& bench);

/// The calibrated machine (machine_json's) with nodes of `gpus_per_node` GPUs, so that a scenario's groups
/// span nodes in the simulation as in the emulation (which places ranks on the scenario's machine) and
/// both sides pick the same collective algorithms. Every GPU keeps what a rank has on this host: its
/// own NIC of the calibrated bandwidth and, inside a node, one link up to an NVSwitch-like fabric and
/// one down at that bandwidth with the NIC route's latency (two NIC latencies), so that a ring step
/// costs the same inside a node as between nodes. 1 GPU per node returns the machine as it is.
[[nodiscard]] nlohmann::json machine_with_node_size(const nlohmann::json& machine, std::uint32_t gpus_per_node);

}  // namespace exasim::validate
