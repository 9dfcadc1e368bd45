#include "sim/collectives/algorithm.hpp"

#include "sim/collectives/internal/registry.hpp"

#include <array>

namespace exasim::collectives {

namespace detail {

const AlgorithmEntry& entry(Algorithm algorithm) {
#define EXASIM_ALGORITHM_ENTRY(enumerator, name) &name##_algorithm(),
  static const std::array<const AlgorithmEntry*, kAlgorithmCount> table = {
      EXASIM_COLLECTIVE_ALGORITHMS(EXASIM_ALGORITHM_ENTRY)};
#undef EXASIM_ALGORITHM_ENTRY
  return *table[static_cast<std::size_t>(algorithm)];
}

}  // namespace detail

std::string_view to_string(Algorithm algorithm) { return detail::entry(algorithm).name; }

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (Algorithm a : kAlgorithms)
    if (name == to_string(a)) return a;
  return std::nullopt;
}

std::string algorithm_names() {
  std::string names;
  for (Algorithm a : kAlgorithms) {
    if (!names.empty()) names += ", ";
    names += to_string(a);
  }
  return names;
}

Algorithm emulated_by(Algorithm resolved) { return detail::entry(resolved).emulated_by; }

bool joins_any_members(Algorithm requested) { return detail::entry(requested).joins_any_members; }

bool bundles_are_cycles(Algorithm requested) { return detail::entry(requested).bundles_are_cycles; }

bool may_split_by_node(Algorithm requested) { return detail::entry(requested).may_split_by_node; }

}  // namespace exasim::collectives
