#include "sim/collectives/step_costs.hpp"

#include <algorithm>

namespace exasim::collectives {

const StepCost* find_step_cost(const std::vector<StepCost>& rows, schedule::CollKind kind, double bytes,
                               std::uint32_t members) {
  const bool sized = std::any_of(rows.begin(), rows.end(), [&](const StepCost& row) {
    return row.kind == kind && row.members != 0 && row.members == members;
  });
  const std::uint32_t wanted = sized ? members : 0;
  const StepCost* best = nullptr;
  for (const StepCost& row : rows) {
    if (row.kind != kind || row.members != wanted || bytes > row.up_to_bytes) continue;
    if (best == nullptr || row.up_to_bytes < best->up_to_bytes) best = &row;
  }
  return best;
}

}  // namespace exasim::collectives
