#pragma once
// Lines up a measured trace and a simulated one by op class (traces/op_classes.hpp): compute; each
// collective kind per grid dimension (post to completion); exposed communication (time blocked in waits);
// and, where groups are known, the members' post skew (a diagnostic).

#include "traces/op_classes.hpp"
#include "traces/trace.hpp"

#include <map>
#include <string>
#include <vector>

namespace exasim::validate {

struct ClassError {
  std::string op_class;
  double measured_s = 0;
  double simulated_s = 0;
  double error_pct = 0;  ///< (simulated - measured) / measured; 0 when both are 0
};

[[nodiscard]] double error_pct(double measured, double simulated);
/// Class by class, from trace::op_class_times() of each side (or medians of several).
[[nodiscard]] std::vector<ClassError> compare_class_times(std::map<std::string, double> measured,
                                                          std::map<std::string, double> simulated);
[[nodiscard]] std::vector<ClassError> compare_classes(const std::vector<trace::TraceRow>& measured,
                                                      const std::vector<trace::TraceRow>& simulated);

}  // namespace exasim::validate
