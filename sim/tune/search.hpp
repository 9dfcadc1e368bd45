#pragma once
// The search stage of `exasim tune` (docs/tune.md): every parallel configuration of a scenario's GPU
// count (AxoNN 4D grids; Megatron's tp x pp x dp with ZeRO stage, micro-batch, virtual stages, sequence
// parallelism and recomputation; or both), what cannot run dropped with the reason counted (the checks
// the scenario loader and memory check use), the rest ranked by the analytic estimate (analytic.hpp).
// The full simulation of the best few is the command's (sim/cli/tune_command.cpp).
//
// LIMITATIONS: the overlap flags and placement are the scenario's, not searched; so are AxoNN's
// recompute mode and Megatron's scatter_gather and grad_accumulation_fusion. Megatron micro-batch sizes
// are every divisor of global_batch / dp; virtual stages every divisor of layers / pp.

#include "sim/scenario/scenario.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "sim/tune/analytic.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace exasim::tune {

/// Which schemes a search enumerates (`exasim tune --scheme`).
enum class SchemeChoice : std::uint8_t { Axonn4D, Megatron, All };

/// One configuration that fits, with its analytic estimate.
struct Candidate {
  scenario::SchemeId scheme = scenario::SchemeId::Axonn4D;
  schedule::Axonn4DConfig axonn;                              ///< scheme axonn4d
  schedule::MegatronConfig megatron;                          ///< scheme megatron
  schedule::Recompute recompute = schedule::Recompute::Full;  ///< training.recompute (searched for megatron)
  double analytic_s = 0;                                      ///< AnalyticModel::iteration_s
  double memory_bytes = 0;                                    ///< the memory model's total per GPU
};

struct SearchResult {
  std::uint64_t considered = 0;  ///< grids whose product is the GPU count
  std::uint64_t fitting = 0;     ///< of those, feasible and within the GPU's memory
  /// By reason: the field to blame, or "memory"; with SchemeChoice::All prefixed "axonn4d " / "megatron ".
  std::map<std::string, std::uint64_t> refused;
  std::vector<Candidate> ranked;  ///< the fitting ones, fastest estimate first, then by configuration
  double analytic_wall_s = 0;     ///< wall seconds of the estimates (not an output: wall time)
  double ring_setup_wall_s = 0;   ///< wall seconds of the ring tables before them (AnalyticModel::ring)
};

/// Every (gx, gy, gz, gdata) with gx*gy*gz*gdata = base.gpus, in lexicographic order.
[[nodiscard]] std::vector<schedule::Axonn4DConfig> axonn4d_grids(std::uint32_t gpus);

/// Enumerates, refuses and ranks; `base` gives everything but the grid.
[[nodiscard]] SearchResult search_axonn4d(const scenario::Scenario& base, AnalyticModel& model);

/// Enumerates, refuses and ranks every Megatron configuration (tp, pp, dp = gpus / (tp pp), zero 0-3
/// (0 alone when dp = 1), micro_batch, virtual_stages, sequence_parallel when tp > 1, recompute none /
/// selective / full), in
/// that nesting order; `base` gives everything else (scatter_gather, grad_accumulation_fusion from its
/// megatron config).
[[nodiscard]] SearchResult search_megatron(const scenario::Scenario& base, AnalyticModel& model);

/// The search of `choice`: with All, both searches merged and ranked together.
[[nodiscard]] SearchResult search(const scenario::Scenario& base, AnalyticModel& model, SchemeChoice choice);

/// The configuration as a scenario: `base` with its scheme, parallel config and training.recompute (the
/// scenario struct and its resolved JSON: a scenario ready for `exasim simulate`).
[[nodiscard]] scenario::Scenario with_config(const scenario::Scenario& base, const Candidate& c);
/// `base` with the AxoNN 4D grid `axonn`.
[[nodiscard]] scenario::Scenario with_grid(const scenario::Scenario& base, const schedule::Axonn4DConfig& axonn);

/// "gx=2 gy=4 gz=8 gdata=16".
[[nodiscard]] std::string grid_label(const schedule::Axonn4DConfig& axonn);
/// grid_label for AxoNN 4D; "tp=8 pp=4 dp=32 zero=1 mb=1 v=2 sp=on recompute=selective" for Megatron.
[[nodiscard]] std::string config_label(const Candidate& c);
/// A total order on configurations (scheme, then its figures), for ties of the estimate or simulation.
[[nodiscard]] bool config_less(const Candidate& a, const Candidate& b);

/// Spearman's rank correlation of two equally long series (ties get their mean rank); 0 below 2 points.
[[nodiscard]] double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace exasim::tune
