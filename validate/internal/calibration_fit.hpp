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
// One (latency, bandwidth) pair serves every collective kind because the emulator runs every kind as
// a ring of the same step (libnbc's ring all-reduce; ring all-gather and reduce-scatter of
// emu/collectives/ring_collective.hpp): before that, Open MPI's one-round linear all-gather and all-to-all were
// fitted as p-1-step rings and the fit was off by about 30% rms, its step latency a third of what an
// all-reduce step costs.
//
// LIMITATIONS:
//  - one bandwidth for every size: buffers that fit the host's caches copy faster than 32 MiB ones, and
//    a ring's fixed cost (the skew of its members' wake-ups) is spread over its steps; both show up as
//    fit residuals (rms_relative_error, 10-15% on a quiet 2-core host);
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

/// Least squares on relative error (weights 1/t^2); latency clamped at 0 (then refitted). Throws
/// std::invalid_argument with fewer than 2 points or no positive bandwidth.
[[nodiscard]] LinearFit fit_latency_bandwidth(const std::vector<FitPoint>& points);

struct HostCalibration {
  LinearFit pingpong;                 ///< one pair, idle host
  LinearFit collectives;              ///< every rank busy: the ring collectives
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
