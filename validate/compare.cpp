#include "validate/compare.hpp"

#include <algorithm>
#include <set>

namespace exasim::validate {

double error_pct(double measured, double simulated) {
  if (measured == 0) return simulated == 0 ? 0 : 100;
  return 100 * (simulated - measured) / measured;
}

std::vector<ClassError> compare_classes(const std::vector<trace::TraceRow>& measured,
                                        const std::vector<trace::TraceRow>& simulated) {
  return compare_class_times(trace::op_class_times(measured), trace::op_class_times(simulated));
}

std::vector<ClassError> compare_class_times(std::map<std::string, double> m, std::map<std::string, double> s) {
  std::set<std::string> names;
  for (const auto& [k, v] : m) names.insert(k);
  for (const auto& [k, v] : s) names.insert(k);
  std::vector<ClassError> out;
  for (const auto& name : names) out.push_back({name, m[name], s[name], error_pct(m[name], s[name])});
  // compute first, exposed_comm last, collectives in between (alphabetical): stable, readable tables.
  std::stable_partition(out.begin(), out.end(), [](const ClassError& e) { return e.op_class == "compute"; });
  std::stable_partition(out.begin(), out.end(), [](const ClassError& e) { return e.op_class != "exposed_comm"; });
  return out;
}

}  // namespace exasim::validate
