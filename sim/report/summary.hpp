#pragma once
// What one simulated (or emulated) iteration comes to, typed: the scenario's identity, the iteration
// time and throughput as Megatron/AxoNN count them, where the time went per rank and per parallel
// dimension, the memory estimate, rank 0's communication volume and the run's size. Every output is a
// view of a Summary (summary_views.hpp: text, JSON); nothing parses a view back.

#include "sim/report/compute_breakdown.hpp"
#include "sim/report/link_report.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedule/memory.hpp"
#include "sim/schedule/plan.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exasim::report {

/// One dimension of the process grid (AxoNN x, y, z, data; Megatron tp, pp, dp), in the plan's order.
struct DimensionSummary {
  std::string name;
  double exposed_comm_s = 0;    ///< mean over ranks of the time waiting for this dimension's collectives
  double rank0_wire_bytes = 0;  ///< bytes rank 0 put on the wire for it
  std::uint64_t rank0_collectives = 0;
};

/// What the activation and gradient memory terms assume (schedule/memory.hpp, docs/memory.md).
struct MemoryBasis {
  std::string dtype;
  double gradient_bytes = 0;  ///< per parameter
  std::string recompute, attention;
  double dropout = 0;
};

/// A mixture of experts' routing as the run saw it (schedule/moe.hpp).
struct ExpertLoad {
  std::int64_t experts = 0, top_k = 0;
  std::int64_t ep = 1;
  double active_parameters = 0;
  double busiest_over_mean = 1;  ///< the busiest expert-parallel rank's load over the mean rank's
  double dropped = 0;            ///< fraction of the token copies over capacity
};

struct Summary {
  // Identity: what was simulated.
  std::string scenario, backend, machine, gpu, model;
  double parameters = 0;
  std::optional<ExpertLoad> experts;  ///< a mixture of experts only
  std::uint32_t gpus = 0;
  std::string network, routing, placement;
  std::string
      collectives;     ///< collectives.algorithm as asked (auto, nccl resolve per collective); nccl names its profile
  std::string scheme;  ///< parallel.scheme (the scheme table's name)
  std::vector<scenario::LayoutField> layout;  ///< the scheme's figures (Scheme::describe)
  std::int64_t global_batch = 0;
  std::string recompute, attention, dtype;
  double dropout = 0;
  std::uint64_t seed = 0;

  // Time and throughput.
  double iteration_time_s = 0;
  double model_flops = 0, hardware_flops = 0;
  double tflops_per_gpu = 0, model_tflops_per_gpu = 0, peak_tflops_per_gpu = 0;
  double percent_of_peak = 0, mfu_percent = 0, total_pflops = 0;

  // Where the time went: means over ranks, per dimension, and every rank's own figures.
  double compute_s = 0, idle_s = 0;
  double compute_slowed_s = 0;  ///< of compute_s, what kernels lost beside communication
  std::vector<DimensionSummary> dimensions;
  std::vector<runtime::RankTimes> ranks;
  /// Compute per kernel class; absent when the caller had no kernel times to attribute (exasim-emu).
  std::optional<std::vector<KernelClassTime>> compute_by_kernel;

  // Memory per GPU.
  schedule::MemoryEstimate memory;
  MemoryBasis memory_basis;
  double memory_capacity_bytes = 0;

  /// Link loads; only when the run was asked to meter links (--links).
  std::optional<LinkReport> links;

  // The run itself.
  /// Layer sampling (sim/api/layer_sampling.hpp): the layer counts simulated, whose times were
  /// extrapolated to the model's; absent when every layer was simulated.
  struct SampledLayers {
    std::uint32_t fewer = 0, more = 0;
  };
  std::optional<SampledLayers> sampled_layers;
  std::uint64_t events = 0, flows = 0;
  double wall_s = 0;  ///< wall-clock seconds of the runtime; never in the views (outputs stay byte-identical)
  /// The files the command wrote into its output directory (`simulate --out`); empty without one.
  std::vector<std::string> files_written;
};

/// The summary of `result`, a run of `plan` (the plan of `s`).
[[nodiscard]] Summary make_summary(const scenario::Scenario& s, const schedule::Plan& plan,
                                   const runtime::RunResult& result);

}  // namespace exasim::report
