#include "sim/collectives/algorithm.hpp"

namespace exasim::collectives {

std::string_view to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::Auto: return "auto";
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Auto})
    if (name == to_string(a)) return a;
  return std::nullopt;
}

std::string_view algorithm_choices() { return "ring|tree|hierarchical|auto"; }

}  // namespace exasim::collectives
