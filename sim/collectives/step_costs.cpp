#include "sim/collectives/step_costs.hpp"

namespace exasim::collectives {

const StepCost* find_step_cost(const std::vector<StepCost>& rows, schedule::CollKind kind, double bytes) {
  const StepCost* best = nullptr;
  for (const StepCost& row : rows) {
    if (row.kind != kind || bytes > row.up_to_bytes) continue;
    if (best == nullptr || row.up_to_bytes < best->up_to_bytes) best = &row;
  }
  return best;
}

}  // namespace exasim::collectives
