#pragma once
// The parallel schemes a scenario can name in `parallel.scheme`, as one table: each entry knows how to
// read and check its `parallel` object, build its plan, estimate memory per GPU, count flops and
// describe its layout for the report. Code that depends on the scheme asks the entry (scheme_of(s))
// instead of comparing names, so a new scheme is one file in schemes/ and one line in scheme.cpp.

#include "sim/core/json_view.hpp"
#include "sim/schedule/memory.hpp"
#include "sim/schedule/plan.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace exasim::scenario {

struct Scenario;

/// The handle a Scenario keeps: an index into the table, cheap to copy and compare.
enum class SchemeId : std::uint8_t { Axonn4D, Megatron };

/// One figure of the layout the report prints after the scheme's name: a degree ("tp", 4) or a switch
/// ("sequence_parallel", off). Order is the order printed and written to JSON.
struct LayoutField {
  std::string name;
  std::variant<std::int64_t, bool> value;
};

/// Model and hardware flops of one iteration (schedule/flops.hpp): what throughput and MFU divide.
struct IterationFlops {
  double model = 0;     ///< 72 B s L h^2 (...): the work the model needs
  double hardware = 0;  ///< model flops plus recomputation
};

struct Scheme {
  SchemeId id;
  std::string_view name;  ///< the `parallel.scheme` value
  /// Reads the scheme's keys of `parallel` into `s` (its config field) and checks them against the
  /// model, batch and GPU count already in `s`; InputError naming the field on anything infeasible.
  void (*load)(const JsonView& parallel, Scenario& s);
  schedule::Plan (*build_plan)(const Scenario& s);
  /// Bytes per GPU (schedule/memory.hpp; the worst pipeline stage where stages differ).
  schedule::MemoryEstimate (*memory_per_gpu)(const Scenario& s);
  IterationFlops (*flops)(const Scenario& s);
  /// The layout's figures, as the summary reports them under "parallel".
  std::vector<LayoutField> (*describe)(const Scenario& s);
  /// The model's layers must be a multiple of this (pipeline stages x virtual stages); layer sampling
  /// (sim/api/layer_sampling.hpp) samples in these units.
  std::uint32_t (*layer_unit)(const Scenario& s);
};

/// Every scheme, in the order the `parallel.scheme` error lists them.
[[nodiscard]] std::span<const Scheme> schemes();
/// The entry of `id`.
[[nodiscard]] const Scheme& scheme(SchemeId id);
/// The entry named `name`; nullptr when there is none.
[[nodiscard]] const Scheme* find_scheme(std::string_view name);
/// "axonn4d, megatron": the names, for error messages.
[[nodiscard]] std::string scheme_names();

/// Compares a scheme with a `parallel.scheme` name (tests and messages; code dispatches on the entry).
[[nodiscard]] bool operator==(SchemeId id, std::string_view name);

/// A degree of parallelism in a `parallel` object: an integer in [1, 2^22], 1 when absent.
[[nodiscard]] std::uint32_t parallel_degree(const JsonView& parallel, const char* key);

/// Flops as every current scheme counts them: the same transformer work whatever the layout.
[[nodiscard]] IterationFlops transformer_flops(const Scenario& s);

}  // namespace exasim::scenario
