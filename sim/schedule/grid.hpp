#pragma once
// A process grid: named dimensions with sizes, and the rank layout (which dimension varies fastest).
// A rank's group along a dimension is the ranks that differ from it only in that coordinate.
//
// AxoNN 4D uses x (fastest), y, z, data; Megatron uses tp (fastest), dp, pp.
//
// A view (add_view) is a dimension over a digit of the ranks the other dimensions already lay out: its
// coordinate is (rank / stride) mod size. It adds no ranks (world_size is the product of the constructor's
// dimensions) and its groups are formed with the same stride arithmetic, so a runtime treats it like any
// dimension. A nested dimension (add_nested) is the view of a dimension's `size` fastest coordinates.
// Megatron with context parallelism uses one: its data-parallel dimension spans dp x cp ranks (the
// gradient reduction group) and cp is nested in it. A mixture of experts adds views for its expert-parallel
// and expert-data-parallel groups, carved out of those same data-parallel ranks.
//
// LIMITATIONS: `exasim place` permutes the dimensions of AxoNN 4D grids, which have no views; a view has
// no slot of its own in a placement.

#include "sim/core/fast_divisor.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace exasim::schedule {

using Rank = std::uint32_t;

struct GridDim {
  std::string name;
  std::uint32_t size = 1;
  std::uint32_t stride = 1;  ///< rank distance between neighbours along this dimension
  bool nested = false;       ///< a view (add_view, add_nested): a digit of the ranks, not a factor of the world
};

class ProcessGrid {
 public:
  /// Dimensions listed fastest-varying first.
  explicit ProcessGrid(const std::vector<std::pair<std::string, std::uint32_t>>& fastest_first);

  /// Appends a view: a dimension whose coordinate is (rank / stride) mod size, over ranks the dimensions
  /// already lay out (stride x size must divide the world); returns its index. std::logic_error otherwise
  /// (a caller's bug, not bad input).
  std::size_t add_view(const std::string& name, std::uint32_t stride, std::uint32_t size);
  /// Adds the view whose groups are the `size` fastest coordinates of dimension `parent` (size divides
  /// the parent's); returns its index. std::logic_error otherwise.
  std::size_t add_nested(const std::string& name, std::size_t parent, std::uint32_t size);

  [[nodiscard]] std::uint32_t world_size() const { return world_; }
  [[nodiscard]] const std::vector<GridDim>& dims() const { return dims_; }
  [[nodiscard]] const GridDim& dim(std::size_t d) const { return dims_[d]; }

  [[nodiscard]] std::uint32_t coord(Rank rank, std::size_t d) const {
    return divisors_[d].size.mod(divisors_[d].stride.div(rank));
  }
  /// Member `k` (0-based, in coordinate order) of `rank`'s group along dimension d.
  [[nodiscard]] Rank group_member(Rank rank, std::size_t d, std::uint32_t k) const {
    return rank - coord(rank, d) * dims_[d].stride + k * dims_[d].stride;
  }
  /// A dense id of `rank`'s group along d, in [0, world/size_d).
  [[nodiscard]] std::uint32_t group_id(Rank rank, std::size_t d) const;

 private:
  /// Per dimension, its stride, size and stride x size as divisors: every collective a rank posts
  /// asks for its group (group_id(), group_member()), two divisions each (2.6 % of a 32,768-GCD run).
  struct Divisors {
    FastDivisor stride, size, span;
  };
  std::vector<GridDim> dims_;
  std::vector<Divisors> divisors_;
  std::uint32_t world_ = 1;
};

}  // namespace exasim::schedule
