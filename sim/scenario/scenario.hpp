#pragma once
// A scenario: which machine, which model, how many GPUs, which parallel scheme, training and overlap
// options, and the seed. Loaded from JSON; `machine` and `model` may be a preset name, a path to a JSON
// file or an inline object. `--set path=value` overrides any field after presets are inlined, so
// `--set machine.node.nic_bandwidth_Bps=50e9` is a what-if on a preset.
//
// Every field is validated; a bad one is an InputError naming the file, the field and what is allowed.

#include "sim/collectives/algorithm.hpp"
#include "sim/job/job_config.hpp"
#include "sim/scenario/machine.hpp"
#include "sim/scenario/placement.hpp"
#include "sim/scenario/scheme.hpp"
#include "sim/schedule/memory.hpp"
#include "sim/schedule/model.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace exasim::scenario {

/// The most GPUs a scenario may ask for (and any machine may have: topologies/network.cpp).
inline constexpr std::int64_t kMaxGpus = std::int64_t{1} << 20;
/// The most layer passes (micro-batches x layers) one iteration may hold (a megatron check).
inline constexpr std::int64_t kMaxLayerPasses = std::int64_t{1} << 21;
/// Past this much work (rank_layer_passes) `exasim simulate` warns that the run takes minutes and GBs.
inline constexpr double kLargeRunPasses = 16.0 * 1024 * 1024;

struct Scenario {
  std::string name;
  std::string source;       ///< scenario file
  nlohmann::json resolved;  ///< presets inlined, overrides applied: what was simulated
  MachineSpec machine;
  schedule::ModelSpec model;
  std::uint32_t gpus = 0;
  const Scheme* scheme = nullptr;  ///< parallel.scheme's entry of the scheme table (scheme_of)
  ConfigPtr parallel;              ///< its configuration, of the entry's own type (parallel_as)
  schedule::TrainingSpec training;
  schedule::OverlapSpec overlap;
  PlacementSpec placement;
  /// collectives.algorithm: nccl (default: what NCCL/RCCL would run), ring, tree, hierarchical, auto
  collectives::Algorithm collective_algorithm = collectives::Algorithm::Nccl;
  std::uint64_t seed = 1;
  /// simulation.sample_layers: 0 (default) simulates every layer; K > 0 simulates K and 2K layers (in
  /// the scheme's layer units) and extrapolates linearly to the model's: an approximation for runs too
  /// large to simulate whole (sim/api/layer_sampling.hpp, docs/performance.md).
  std::uint32_t sample_layers = 0;
  /// The optional `job` object: the training run around the iteration (`exasim job`, docs/job.md).
  std::optional<job::JobConfig> job;
};

/// The scheme table's entry for the scenario's `parallel.scheme`.
[[nodiscard]] inline const Scheme& scheme_of(const Scenario& scenario) { return *scenario.scheme; }

/// The scenario's parallel configuration as the type T its scheme stores (std::logic_error otherwise).
template <class T>
[[nodiscard]] const T& parallel_as(const Scenario& scenario) {
  return config_as<T>(*scenario.parallel);
}

/// The simulation's work: GPUs x the layer passes of each (layers of its stage x micro-batches). The fast
/// core takes 2-5 us of wall time per pass on 2 cores (docs/reliability.md).
[[nodiscard]] double rank_layer_passes(const Scenario& scenario);

/// The most simulation.sample_layers accepts.
inline constexpr std::int64_t kMaxSampleLayers = 1024;

/// Bytes per GPU the scenario's scheme needs (schedule/memory.hpp; the worst pipeline stage where stages
/// differ).
[[nodiscard]] schedule::MemoryEstimate memory_per_gpu(const Scenario& scenario);

/// InputError naming the overflow when memory_per_gpu exceeds the GPU's HBM capacity.
void check_memory_fits(const Scenario& scenario);

/// Loads a scenario file and applies `overrides` ("path=value", value parsed as JSON, else a string).
[[nodiscard]] Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/// Same, from an already-parsed document; `source` names it in errors.
[[nodiscard]] Scenario parse_scenario(nlohmann::json document, const std::string& source,
                                      const std::vector<std::string>& overrides = {});

}  // namespace exasim::scenario
