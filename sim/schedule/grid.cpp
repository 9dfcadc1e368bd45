#include "sim/schedule/grid.hpp"

#include <stdexcept>

namespace exasim::schedule {

ProcessGrid::ProcessGrid(const std::vector<std::pair<std::string, std::uint32_t>>& fastest_first) {
  for (const auto& [name, size] : fastest_first) {
    // Plans are validated before a grid is built; a zero here is a caller's bug, not bad input.
    if (size == 0) throw std::logic_error("ProcessGrid: dimension '" + name + "' has size 0");
    dims_.push_back({name, size, world_});
    divisors_.push_back({FastDivisor(world_), FastDivisor(size), FastDivisor(world_ * size)});
    world_ *= size;
  }
}

std::size_t ProcessGrid::add_view(const std::string& name, std::uint32_t stride, std::uint32_t size) {
  if (size == 0 || stride == 0 || world_ % stride != 0 || world_ / stride % size != 0)
    throw std::logic_error("ProcessGrid: view '" + name + "' is not a digit of the ranks");
  dims_.push_back({name, size, stride, true});
  divisors_.push_back({FastDivisor(stride), FastDivisor(size), FastDivisor(stride * size)});
  return dims_.size() - 1;
}

std::size_t ProcessGrid::add_nested(const std::string& name, std::size_t parent, std::uint32_t size) {
  if (parent >= dims_.size() || dims_[parent].nested || size == 0 || dims_[parent].size % size != 0)
    throw std::logic_error("ProcessGrid: nested dimension '" + name + "' does not divide its parent");
  // The parent's stride, fewer coordinates: coord, group_member and group_id need nothing else.
  return add_view(name, dims_[parent].stride, size);
}

std::uint32_t ProcessGrid::group_id(Rank rank, std::size_t d) const {
  // Drop the coordinate along d: the part below it stays, the part above shifts down by one factor.
  const Divisors& by = divisors_[d];
  const std::uint32_t below = by.stride.mod(rank);
  const std::uint32_t above = by.span.div(rank);
  return above * dims_[d].stride + below;
}

}  // namespace exasim::schedule
