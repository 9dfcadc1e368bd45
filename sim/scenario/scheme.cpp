#include "sim/scenario/scheme.hpp"

#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schemes/axonn4d_scheme.hpp"
#include "sim/scenario/schemes/fsdp_scheme.hpp"
#include "sim/scenario/schemes/megatron_scheme.hpp"
#include "sim/schedule/flops.hpp"

#include <array>

namespace exasim::scenario {

namespace {

// The table: one line per scheme.
const auto& table() {
  static const std::array entries = {axonn4d_scheme(), megatron_scheme(), fsdp_scheme()};
  return entries;
}

}  // namespace

std::span<const Scheme> schemes() { return table(); }

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

std::string scheme_list(std::string_view Scheme::*field) {
  const auto all = schemes();
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? " and " : ", ") + std::string(all[i].*field);
  return out;
}

std::size_t scheme_index(const Scheme& entry) { return static_cast<std::size_t>(&entry - schemes().data()); }

std::uint32_t parallel_degree(const JsonView& parallel, const char* key) {
  return static_cast<std::uint32_t>(parallel.integer_or(key, 1, 1, kMaxGpus));
}

schedule::Infeasibility layer_passes_refusal(std::string field, std::int64_t micro_batches, std::int64_t layers,
                                             const std::string& remedy) {
  const std::int64_t passes = micro_batches * layers;
  if (passes <= kMaxLayerPasses) return {};
  return {std::move(field), std::to_string(micro_batches) + " micro-batches x " + std::to_string(layers) +
                                " layers = " + std::to_string(passes) + " layer passes per iteration, more than the " +
                                std::to_string(kMaxLayerPasses) +
                                " exasim simulates in bounded time and memory: " + remedy};
}

IterationFlops transformer_flops(const Scenario& s) {
  return {schedule::model_flops(s.model, s.training.global_batch),
          schedule::hardware_flops(s.model, s.training.global_batch, s.training.recompute)};
}

std::uint32_t csv_integer(const CsvCells& cells, std::string_view column, std::uint32_t min, std::uint32_t max) {
  const std::string text = cells.cell(column);
  std::uint64_t value = 0;
  bool ok = !text.empty() && text.size() <= 10;
  for (const char c : text) {
    ok = ok && c >= '0' && c <= '9';
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (!ok || value < min || value > max)
    cells.fail(column, "'" + text + "' is not an integer from " + std::to_string(min) + " to " + std::to_string(max));
  return static_cast<std::uint32_t>(value);
}

std::string shown(const LayoutField& field) {
  if (const bool* on = std::get_if<bool>(&field.value)) return *on ? "on" : "off";
  if (const auto* degree = std::get_if<std::int64_t>(&field.value)) return std::to_string(*degree);
  return std::get<std::string>(field.value);
}

bool csv_bool(const CsvCells& cells, std::string_view column) {
  const std::string text = cells.cell(column);
  if (text != "true" && text != "false") cells.fail(column, "'" + text + "' is not true or false");
  return text == "true";
}

}  // namespace exasim::scenario
