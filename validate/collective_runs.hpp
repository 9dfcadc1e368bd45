#pragma once
// One collective alone on a machine, as nccl-tests runs it: `gpus` ranks packed onto the machine's nodes
// (rank r on GPU r), one collective of `bytes` over all of them, simulated with the fast flow core; and
// the published nccl-tests points of validate/collectives/published_busbw.json it is checked against.
//
// Bus bandwidth is nccl-tests' (doc/PERFORMANCE.md): algBw = S / t, busBw = algBw x 2(n-1)/n for
// all-reduce and algBw x (n-1)/n for all-gather and reduce-scatter, S being the full buffer (the
// all-gather's output, the reduce-scatter's input: CollStart's bytes).
//
// LIMITATIONS: one collective at a time, nothing else on the machine; no all-to-all or broadcast
// (no CollKind for them); nccl-tests' in-place/out-of-place distinction is not made.

#include "sim/collectives/algorithm.hpp"
#include "sim/collectives/nccl_tuner.hpp"
#include "sim/scenario/machine.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exasim::validate {

/// nccl-tests' busBw / algBw factor.
[[nodiscard]] double bus_factor(schedule::CollKind kind, std::uint32_t n);

struct CollectiveRun {
  double time_s = 0;
  double bus_Bps = 0;
  /// What NCCL's tuner chose (algorithm collectives::Algorithm::Nccl only).
  std::optional<collectives::NcclCost> choice;
};

/// Simulates one collective of `kind` over `bytes` on the first `gpus` GPUs of `machine`. `rings_only`:
/// under nccl, the library is held to rings, as NCCL_ALGO=Ring holds it (no tree, no NVLS).
[[nodiscard]] CollectiveRun simulate_collective(const scenario::MachineSpec& machine, std::uint32_t gpus,
                                                schedule::CollKind kind, double bytes, collectives::Algorithm algorithm,
                                                bool rings_only = false);

/// A published measurement of one collective.
struct PublishedCollective {
  std::string name;
  std::string machine;           ///< preset name (topologies/presets)
  nlohmann::json machine_patch;  ///< JSON merge patch applied to the preset (e.g. another GPU)
  std::uint32_t gpus = 0;
  schedule::CollKind kind = schedule::CollKind::AllReduce;
  std::string algorithm;         ///< what the measurement ran: "nccl" (the library's choice) or "ring"
  std::vector<double> bytes;     ///< message sizes
  std::vector<double> bus_GBps;  ///< published busBw at each size, or empty
  std::vector<double> time_us;   ///< published time at each size, or empty
  std::string source;
  std::string note;
  bool scored = true;  ///< false: shown, not counted (the note says why)
};

/// Reads published_busbw.json; InputError naming the file and field on anything malformed.
[[nodiscard]] std::vector<PublishedCollective> load_published_collectives(const std::string& path);

/// The machine of `point`: its preset with the patch applied.
[[nodiscard]] scenario::MachineSpec machine_of(const PublishedCollective& point);

}  // namespace exasim::validate
