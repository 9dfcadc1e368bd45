#include "sim/runtime/runtime.hpp"

#include <algorithm>

namespace exasim::runtime {

RunResult finished_run(std::string backend, const schedule::Plan& plan, std::vector<RankTimes> ranks,
                       std::vector<double> rank0_wire_bytes, std::uint64_t events, std::uint64_t flows) {
  RunResult result;
  result.backend = std::move(backend);
  for (const auto& r : ranks) result.iteration_s = std::max(result.iteration_s, r.finish_s);
  result.ranks = std::move(ranks);
  result.rank0_wire_bytes = std::move(rank0_wire_bytes);
  result.rank0_collectives = schedule::collectives_per_dim(plan, 0);
  result.events = events;
  result.flows = flows;
  return result;
}

}  // namespace exasim::runtime
