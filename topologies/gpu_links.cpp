#include "topologies/gpu_links.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace exasim::topo {

void GpuLinkMatrix::set_pair(std::uint32_t a, std::uint32_t b, double bandwidth) {
  bandwidth_Bps[a * gpus + b] = bandwidth;
  bandwidth_Bps[b * gpus + a] = bandwidth;
}

std::optional<std::uint32_t> GpuLinkMatrix::via(std::uint32_t from, std::uint32_t to) const {
  if (from == to || linked(from, to)) return std::nullopt;
  std::optional<std::uint32_t> best;
  double best_bw = 0;
  for (std::uint32_t m = 0; m < gpus; ++m) {
    if (m == from || m == to || !linked(from, m) || !linked(m, to)) continue;
    const double bottleneck = std::min(at(from, m), at(m, to));
    if (!best || bottleneck > best_bw) {  // strict: the lowest number wins ties
      best = m;
      best_bw = bottleneck;
    }
  }
  return best;
}

void GpuLinkMatrix::validate() const {
  if (gpus == 0) throw std::invalid_argument("GpuLinkMatrix: no GPUs");
  if (bandwidth_Bps.size() != std::size_t{gpus} * gpus) {
    throw std::invalid_argument("GpuLinkMatrix: expected " + std::to_string(gpus * gpus) + " entries, got " +
                                std::to_string(bandwidth_Bps.size()));
  }
  for (double bw : bandwidth_Bps) {
    if (!(bw >= 0)) throw std::invalid_argument("GpuLinkMatrix: negative or NaN bandwidth");
  }
  for (std::uint32_t a = 0; a < gpus; ++a) {
    for (std::uint32_t b = 0; b < gpus; ++b) {
      if (a != b && !linked(a, b) && !via(a, b)) {
        throw std::invalid_argument("GpuLinkMatrix: GPU " + std::to_string(a) + " cannot reach GPU " +
                                    std::to_string(b) + " directly or through one other GPU");
      }
    }
  }
}

GpuLinkMatrix nvlink_all_to_all(std::uint32_t gpus, double bandwidth_Bps) {
  GpuLinkMatrix m{gpus, std::vector<double>(std::size_t{gpus} * gpus, bandwidth_Bps)};
  for (std::uint32_t g = 0; g < gpus; ++g) m.bandwidth_Bps[g * gpus + g] = 0;
  return m;
}

GpuLinkMatrix frontier_mi250x_gcd_matrix() {
  constexpr double GBps = 1e9;
  GpuLinkMatrix m{8, std::vector<double>(64, 0.0)};
  for (std::uint32_t pkg = 0; pkg < 4; ++pkg) m.set_pair(2 * pkg, 2 * pkg + 1, 200 * GBps);  // 4 IF links
  m.set_pair(2, 4, 100 * GBps);                                                              // 2 IF links
  m.set_pair(0, 6, 100 * GBps);
  for (auto [a, b] : {std::pair{0u, 2u}, {1u, 3u}, {4u, 6u}, {5u, 7u}, {1u, 5u}, {3u, 7u}}) m.set_pair(a, b, 50 * GBps);
  return m;
}

}  // namespace exasim::topo
