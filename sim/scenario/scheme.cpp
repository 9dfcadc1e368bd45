#include "sim/scenario/scheme.hpp"

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schemes/axonn4d_scheme.hpp"
#include "sim/scenario/schemes/megatron_scheme.hpp"
#include "sim/schedule/flops.hpp"

#include <array>
#include <stdexcept>

namespace exasim::scenario {

namespace {

// The table: one line per scheme, indexed by SchemeId (checked once, when first used).
const std::array<Scheme, 2>& table() {
  static const std::array<Scheme, 2> entries = [] {
    std::array<Scheme, 2> t = {axonn4d_scheme(), megatron_scheme()};
    for (std::size_t i = 0; i < t.size(); ++i)
      if (static_cast<std::size_t>(t[i].id) != i) throw std::logic_error("scheme table out of SchemeId order");
    return t;
  }();
  return entries;
}

}  // namespace

std::span<const Scheme> schemes() { return table(); }

const Scheme& scheme(SchemeId id) { return schemes()[static_cast<std::size_t>(id)]; }

const Scheme* find_scheme(std::string_view name) {
  for (const auto& entry : schemes())
    if (entry.name == name) return &entry;
  return nullptr;
}

std::string scheme_names() {
  std::string out;
  for (const auto& entry : schemes()) out += (out.empty() ? "" : ", ") + std::string(entry.name);
  return out;
}

bool operator==(SchemeId id, std::string_view name) { return scheme(id).name == name; }

std::uint32_t parallel_degree(const JsonView& parallel, const char* key) {
  return static_cast<std::uint32_t>(parallel.integer_or(key, 1, 1, kMaxGpus));
}

IterationFlops transformer_flops(const Scenario& s) {
  return {schedule::model_flops(s.model, s.training.global_batch),
          schedule::hardware_flops(s.model, s.training.global_batch, s.training.recompute)};
}

}  // namespace exasim::scenario
