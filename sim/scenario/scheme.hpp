#pragma once
// The parallel schemes a scenario can name in `parallel.scheme`, as one table. Each entry is a complete
// module (schemes/NAME_scheme.cpp): it owns its configuration type (held type-erased in the Scenario,
// read back with parallel_as), reads and checks its `parallel` object and writes it back, builds its
// plan, estimates memory per GPU, counts flops, describes its layout for the report, enumerates the
// configurations `exasim tune` walks with their labels, CSV columns and analytic estimate, and says what
// `exasim place` can score. Code outside schemes/ asks the entry (scheme_of(s)) instead of comparing
// names, so a new scheme is its files in schemes/ and one line in scheme.cpp (docs/contributing.md).

#include "sim/core/json_view.hpp"
#include "sim/schedule/axonn4d.hpp"  // Infeasibility
#include "sim/schedule/memory.hpp"
#include "sim/schedule/plan.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace exasim::scenario {

struct Scenario;

/// A scheme's parallel configuration, type-erased: each scheme stores its own type T as ConfigOf<T>,
/// and only code that knows T (its entry, its tests) reads it back (config_as, parallel_as).
struct SchemeConfig {
  virtual ~SchemeConfig() = default;
};
using ConfigPtr = std::shared_ptr<const SchemeConfig>;

template <class T>
struct ConfigOf final : SchemeConfig {
  explicit ConfigOf(T v) : value(std::move(v)) {}
  T value;
};

template <class T>
[[nodiscard]] ConfigPtr make_config(T value) {
  return std::make_shared<const ConfigOf<T>>(std::move(value));
}
/// The T inside `config`, or nullptr when it holds another scheme's type.
template <class T>
[[nodiscard]] const T* config_if(const SchemeConfig* config) {
  const auto* held = dynamic_cast<const ConfigOf<T>*>(config);
  return held ? &held->value : nullptr;
}
/// The T inside `config`; std::logic_error when it holds another type (a bug, not an input error).
template <class T>
[[nodiscard]] const T& config_as(const SchemeConfig& config) {
  const T* value = config_if<T>(&config);
  if (!value) throw std::logic_error("scheme config read as another scheme's type");
  return *value;
}

/// One figure of the layout the report prints after the scheme's name: a degree ("tp", 4), a switch
/// ("sequence_parallel", off) or a choice ("cp_comm", "p2p"). Order is the order printed and written to JSON.
struct LayoutField {
  std::string name;
  std::variant<std::int64_t, bool, std::string> value;
};
/// The value as the text summary and sweep print it: "4", "on" / "off", "p2p".
[[nodiscard]] std::string shown(const LayoutField& field);

/// Model and hardware flops of one iteration (schedule/flops.hpp): what throughput and MFU divide.
struct IterationFlops {
  double model = 0;     ///< 72 B s L h^2 (...): the work the model needs
  double hardware = 0;  ///< model flops plus recomputation
};

/// What a scheme's analytic estimate may ask of the machine (tune's AnalyticModel implements it over the
/// scenario's topology, placement and GPU model; sim/tune/analytic.hpp says how each is priced).
class AnalyticMachine {
 public:
  /// A ring of `size` members `stride` ranks apart: bandwidth per member and per-step latency.
  struct Ring {
    double bandwidth_Bps = 0;
    double step_latency_s = 0;
  };
  virtual ~AnalyticMachine() = default;
  /// Seconds of one rank's op stream of `plan` (its first), collectives on their grid dimension's ring.
  [[nodiscard]] virtual double replay_s(const schedule::Plan& plan) = 0;
  [[nodiscard]] virtual Ring ring_of(std::uint32_t stride, std::uint32_t size) = 0;
  /// Seconds of one collective of `kind` on an S-byte buffer over the ring (stride, size).
  [[nodiscard]] virtual double collective_s(schedule::CollKind kind, std::uint32_t stride, std::uint32_t size,
                                            double bytes) = 0;
};

/// A scheme's analytic iteration time for `exasim tune`, one per base scenario (it may memoise).
class SchemeEstimate {
 public:
  virtual ~SchemeEstimate() = default;
  /// Routes the rings and builds the probes `iteration_s` needs, so its own time is the estimate's.
  virtual void prepare(const Scenario& s, AnalyticMachine& machine) = 0;
  /// Seconds of one iteration of `s` (precondition: its refusal is empty).
  [[nodiscard]] virtual double iteration_s(const Scenario& s, AnalyticMachine& machine) = 0;
};

/// One configuration a tune search walks: the scheme's config and training.recompute.
struct TuneChoice {
  ConfigPtr config;
  schedule::Recompute recompute = schedule::Recompute::Full;
};

/// A tune.csv cell of the row being read, by column name ("" when absent); from_csv throws InputError
/// through `fail(column, why)`.
struct CsvCells {
  std::function<std::string(std::string_view column)> cell;
  std::function<void(std::string_view column, const std::string& why)> fail;
};

struct Scheme {
  std::string_view name;   ///< the `parallel.scheme` value
  std::string_view title;  ///< how pages name it: "AxoNN 4D"
  /// What tune calls one configuration ("grid"), and what it searches (for --help).
  std::string_view candidate_noun;
  std::string_view searched;

  /// Reads the scheme's keys of `parallel` into s.parallel and checks them against the model, batch and
  /// GPU count already in `s`; InputError naming the field on anything infeasible.
  void (*load)(const JsonView& parallel, Scenario& s);
  /// Why s.parallel cannot run on `s`'s model, batch and GPUs (empty `why` when it can): what load and
  /// tune's search refuse with. Assumes the degrees multiply to the GPU count (load checks that first).
  schedule::Infeasibility (*refusal)(const Scenario& s);
  /// The `parallel` object that loads back to `config` ("scheme" included).
  nlohmann::json (*to_json)(const SchemeConfig& config);

  schedule::Plan (*build_plan)(const Scenario& s);
  /// Bytes per GPU (schedule/memory.hpp; the worst pipeline stage where stages differ).
  schedule::MemoryEstimate (*memory_per_gpu)(const Scenario& s);
  IterationFlops (*flops)(const Scenario& s);
  /// The layout's figures, as the summary reports them under "parallel".
  std::vector<LayoutField> (*describe)(const Scenario& s);
  /// The model's layers must be a multiple of this (pipeline stages x virtual stages); layer sampling
  /// (sim/api/layer_sampling.hpp) samples in these units.
  std::uint32_t (*layer_unit)(const Scenario& s);
  /// Layer passes one rank runs per iteration (layers of its stage x micro-batches): the work measure.
  double (*rank_layer_passes)(const Scenario& s);

  /// Every configuration of `base`'s GPU count that tune considers (refusal and memory not yet checked),
  /// in a fixed order; the rest of `base` (its own config where it is this scheme's) fills what is not
  /// searched. `searches_recompute`: whether training.recompute is among what varies.
  void (*enumerate)(const Scenario& base, const std::function<void(const TuneChoice&)>& visit);
  bool searches_recompute;
  /// A total order on configs (ties of the estimate or simulation rank by it).
  bool (*less)(const SchemeConfig& a, const SchemeConfig& b);
  /// "gx=2 gy=4 gz=8 gdata=16": the configuration as tune prints it.
  std::string (*label)(const SchemeConfig& config, schedule::Recompute recompute);
  /// tune.csv: the columns of a config, its cells, and the config back from them. A column another
  /// scheme names too (micro_batch) is one column of a table of every scheme: it must mean the same.
  std::vector<std::string_view> csv_columns;
  std::vector<std::string> (*to_csv)(const SchemeConfig& config);
  ConfigPtr (*from_csv)(const CsvCells& cells);
  std::unique_ptr<SchemeEstimate> (*make_estimate)();

  /// `exasim place`: a plan of `layers` layers in which every rank runs the same stream, so that one
  /// rank's replay scores a placement (sim/place); nullptr for schemes whose ranks differ, which place
  /// scores by make_estimate's estimate instead.
  schedule::Plan (*uniform_plan)(const Scenario& s, std::int64_t layers);
};

/// Every scheme, in the order the `parallel.scheme` error lists them.
[[nodiscard]] std::span<const Scheme> schemes();
/// The entry named `name`; nullptr when there is none.
[[nodiscard]] const Scheme* find_scheme(std::string_view name);
/// "axonn4d, megatron": the names, for error messages.
[[nodiscard]] std::string scheme_names();
/// Every scheme's `field` as prose: "AxoNN 4D and Megatron" (&Scheme::title), "a, b and c".
[[nodiscard]] std::string scheme_list(std::string_view Scheme::*field);
/// The entry's place in the table (tune orders configurations of different schemes by it).
[[nodiscard]] std::size_t scheme_index(const Scheme& entry);

/// A degree of parallelism in a `parallel` object: an integer in [1, 2^22], 1 when absent.
[[nodiscard]] std::uint32_t parallel_degree(const JsonView& parallel, const char* key);

/// The refusal of a plan of more than kMaxLayerPasses layer passes (micro-batches x layers per rank),
/// blamed on `field` with `remedy` ("raise micro_batch"); empty `why` within the bound.
[[nodiscard]] schedule::Infeasibility layer_passes_refusal(std::string field, std::int64_t micro_batches,
                                                           std::int64_t layers, const std::string& remedy);

/// Flops as every current scheme counts them: the same transformer work whatever the layout.
[[nodiscard]] IterationFlops transformer_flops(const Scenario& s);

/// A tune.csv cell read as an integer in [min, max]; fails naming the column otherwise.
[[nodiscard]] std::uint32_t csv_integer(const CsvCells& cells, std::string_view column, std::uint32_t min,
                                        std::uint32_t max);
/// A tune.csv cell read as "true" or "false".
[[nodiscard]] bool csv_bool(const CsvCells& cells, std::string_view column);

}  // namespace exasim::scenario
