#pragma once
// The search stage of `exasim tune` (docs/tune.md): every AxoNN 4D grid of a scenario's GPU count,
// what cannot run dropped with the reason counted, the rest ranked by the analytic estimate
// (analytic.hpp). The full simulation of the best few is the command's (sim/cli/tune_command.cpp).
//
// LIMITATIONS: AxoNN 4D only (Megatron's tp x pp x dp search is not done); the overlap flags, recompute
// mode and placement are the scenario's, not searched.

#include "sim/scenario/scenario.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "sim/tune/analytic.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace exasim::tune {

/// One configuration that fits, with its analytic estimate.
struct Candidate {
  schedule::Axonn4DConfig axonn;
  double analytic_s = 0;    ///< AnalyticModel::iteration_s
  double memory_bytes = 0;  ///< the memory model's total per GPU
};

struct SearchResult {
  std::uint64_t considered = 0;                  ///< grids whose product is the GPU count
  std::uint64_t fitting = 0;                     ///< of those, feasible and within the GPU's memory
  std::map<std::string, std::uint64_t> refused;  ///< by reason: the field to blame, or "memory"
  std::vector<Candidate> ranked;                 ///< the fitting ones, fastest estimate first, then by grid
  double analytic_wall_s = 0;                    ///< wall seconds of the estimates (not an output: wall time)
  double ring_setup_wall_s = 0;                  ///< wall seconds of the ring tables before them (AnalyticModel::ring)
};

/// Every (gx, gy, gz, gdata) with gx*gy*gz*gdata = base.gpus, in lexicographic order.
[[nodiscard]] std::vector<schedule::Axonn4DConfig> axonn4d_grids(std::uint32_t gpus);

/// Enumerates, refuses and ranks; `base` gives everything but the grid.
[[nodiscard]] SearchResult search_axonn4d(const scenario::Scenario& base, AnalyticModel& model);

/// `base` with the grid of `axonn` (the scenario struct and its resolved JSON: a scenario ready for
/// `exasim simulate`).
[[nodiscard]] scenario::Scenario with_grid(const scenario::Scenario& base, const schedule::Axonn4DConfig& axonn);

/// "gx=2 gy=4 gz=8 gdata=16".
[[nodiscard]] std::string grid_label(const schedule::Axonn4DConfig& axonn);

/// Spearman's rank correlation of two equally long series (ties get their mean rank); 0 below 2 points.
[[nodiscard]] double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace exasim::tune
