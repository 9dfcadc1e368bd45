#include "traces/op_classes.hpp"

#include <algorithm>
#include <set>

namespace exasim::trace {

std::map<std::string, double> op_class_times(const std::vector<TraceRow>& rows) {
  std::map<std::string, double> sum;
  std::set<std::uint32_t> ranks;
  for (const auto& r : rows) {
    ranks.insert(r.rank);
    const double d = r.t_end_s - r.t_start_s;
    if (r.dim.empty())
      sum["compute"] += d;
    else if (r.kind == "wait")
      sum["exposed_comm"] += d;
    else
      sum[r.kind + "." + r.dim] += d;
  }
  const double n = std::max<double>(1, static_cast<double>(ranks.size()));
  for (auto& [name, value] : sum) value /= n;
  return sum;
}

}  // namespace exasim::trace
