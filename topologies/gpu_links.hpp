#pragma once
// Which GPUs of a node have a direct link, and how fast it is: NVLink boards are all-to-all, but
// Frontier's MI250X node leaves 16 of its 28 GCD pairs without a direct Infinity Fabric link, and the
// collective cost there depends on which pairs are fast.
//
// A pair without a direct link is routed through exactly one intermediate GPU. The intermediate is
// fixed per ordered pair (not per flow): the one whose two hops have the widest bottleneck, lowest GPU
// number on ties, so a route never changes between runs or between flows.
//
// LIMITATIONS:
//  - one latency for every direct link (taken from NodeSpec::gpu_gpu_latency_s by the topologies);
//    Infinity Fabric and NVLink hop latencies are not distinguished per pair.
//  - at most one intermediate GPU: a matrix whose unlinked pairs have no common neighbour is rejected
//    rather than routed over longer paths (no shipped machine needs more).
//  - the intermediate GPU forwards for free: no copy-engine or compute cost is charged to it.
//  - no PCIe/ESM link between GPU and NIC (see node.hpp).

#include <cstdint>
#include <optional>
#include <vector>

namespace exasim::topo {

struct GpuLinkMatrix {
  std::uint32_t gpus = 0;
  /// Row-major, gpus x gpus: bandwidth_Bps[from * gpus + to], per direction. 0 = no direct link.
  /// The diagonal is ignored.
  std::vector<double> bandwidth_Bps;

  [[nodiscard]] double at(std::uint32_t from, std::uint32_t to) const { return bandwidth_Bps[from * gpus + to]; }
  [[nodiscard]] bool linked(std::uint32_t from, std::uint32_t to) const { return from != to && at(from, to) > 0; }
  /// Sets both directions of a pair.
  void set_pair(std::uint32_t a, std::uint32_t b, double bandwidth);

  /// The GPU an unlinked ordered pair goes through (rule above); nullopt when the pair is linked or no
  /// GPU links to both ends.
  [[nodiscard]] std::optional<std::uint32_t> via(std::uint32_t from, std::uint32_t to) const;

  /// Throws std::invalid_argument when the size is wrong, a bandwidth is negative, or an unlinked pair
  /// has no intermediate GPU.
  void validate() const;
};

/// Every ordered pair linked at the same bandwidth (NVLink/NVSwitch boards: Perlmutter, Alps).
[[nodiscard]] GpuLinkMatrix nvlink_all_to_all(std::uint32_t gpus, double bandwidth_Bps);

/// Frontier's 8 MI250X GCDs in ROCm/Slurm numbering (OLCF node diagram [F2], docs/sources.md 2.1): 200 GB/s
/// inside a package (0-1, 2-3, 4-5, 6-7), 100 GB/s for 2-4 and 0-6, 50 GB/s for 0-2, 1-3, 4-6, 5-7, 1-5 and 3-7;
/// the other 16 pairs are unlinked.
[[nodiscard]] GpuLinkMatrix frontier_mi250x_gcd_matrix();

}  // namespace exasim::topo
