#include "sim/schedule/grid.hpp"

namespace exasim::schedule {

ProcessGrid::ProcessGrid(const std::vector<std::pair<std::string, std::uint32_t>>& fastest_first) {
  for (const auto& [name, size] : fastest_first) {
    dims_.push_back({name, size, world_});
    world_ *= size;
  }
}

std::uint32_t ProcessGrid::group_id(Rank rank, std::size_t d) const {
  const auto& dim = dims_[d];
  // Drop the coordinate along d: the part below it stays, the part above shifts down by one factor.
  std::uint32_t below = rank % dim.stride;
  std::uint32_t above = rank / (dim.stride * dim.size);
  return above * dim.stride + below;
}

}  // namespace exasim::schedule
