#pragma once
// Views of a Summary: the readable text `exasim simulate` prints and the JSON object of `--json` and
// summary.json (keys documented in README.md, "Output"). Both are byte-identical run to run.

#include "sim/report/summary.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>

namespace exasim::report {

/// The summary as one JSON object, keys in the documented order.
[[nodiscard]] nlohmann::ordered_json to_json(const Summary& summary);
/// Its "parallel" object: the scheme and its layout figures.
[[nodiscard]] nlohmann::ordered_json parallel_json(const Summary& summary);
/// The same, for people.
void print_summary(std::ostream& out, const Summary& summary);

}  // namespace exasim::report
