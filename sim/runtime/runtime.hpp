#pragma once
// The contract between plans and the runtimes that execute them (fast flow core, SimGrid, MPI).
//
// A runtime takes a Job (the plan, the cost of each kernel on this machine, where each rank runs) and
// returns a RunResult; while it runs it reports every op of the observed ranks to an OpObserver, from
// which traces are written. All runtimes fill RunResult the same way so that reports and validation
// compare like with like.

#include "sim/collectives/router.hpp"
#include "sim/collectives/step_costs.hpp"
#include "sim/schedule/plan.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace exasim::runtime {

using schedule::Rank;

struct Job {
  const schedule::Plan* plan = nullptr;
  std::vector<double> kernel_time_s;       ///< per Plan::kernels entry, from the GPU model
  std::vector<std::uint32_t> gpu_of_rank;  ///< placement; empty means rank r on GPU r
  double collective_step_overhead_s = 0;   ///< software cost of one collective step, added to link latencies
  /// A group runs its collectives one at a time in post order (NCCL/RCCL: a communicator's kernels share
  /// its stream); false: they run beside each other, sharing bandwidth (an MPI library progressing
  /// non-blocking collectives, as on the emulation host). Machine field collectives.group_order.
  bool collectives_in_post_order = true;
  /// Calibrated per-kind, per-size rows that replace the step overhead and scale the bandwidth of the
  /// collectives they cover (collectives/step_costs.hpp); empty on machines without them.
  std::vector<collectives::StepCost> step_costs;
  collectives::Algorithm collective_algorithm = collectives::Algorithm::Ring;  ///< resolved per collective
  collectives::NcclProfile nccl_profile;  ///< the library's constants (collective_algorithm nccl)
  /// Fraction by which compute slows while communication it overlaps is in flight (0: none); the
  /// execution core's LIMITATIONS say how (sim/exec/executor.hpp).
  double compute_slowdown_beside_comm = 0;
  std::uint64_t seed = 1;
  /// Per-rank factor (>= 1) on every compute kernel's time: a straggling GPU (`exasim job`'s
  /// job.stragglers). Empty: every rank at 1. Applied by the execution core (both simulators).
  std::vector<double> rank_compute_factor;

  [[nodiscard]] double compute_factor(Rank r) const {
    return r < rank_compute_factor.size() ? rank_compute_factor[r] : 1.0;
  }
  [[nodiscard]] std::uint32_t gpu(Rank r) const { return gpu_of_rank.empty() ? r : gpu_of_rank[r]; }
};

/// What the collectives router needs to know about a group's `sequence`-th collective along `dim`.
[[nodiscard]] inline collectives::GroupCall group_call(const Job& job, Rank first, std::uint8_t dim,
                                                       std::uint32_t group_id, std::uint32_t sequence,
                                                       schedule::CollKind kind, double bytes) {
  collectives::GroupCall call;
  call.grid = &job.plan->grid;
  call.gpu_of_rank = &job.gpu_of_rank;
  call.seed = job.seed;
  call.step_overhead_s = job.collective_step_overhead_s;
  call.step_costs = &job.step_costs;  // the router takes each stage's row, auto's estimate the group's
  call.first = first;
  call.dim = dim;
  call.group_id = group_id;
  call.sequence = sequence;
  call.kind = kind;
  call.bytes = bytes;
  call.shares = job.plan->shares_of(dim);
  call.nccl = &job.nccl_profile;
  return call;
}

/// Time accounting of one rank. Every instant of a rank is computing, blocked in a Wait (exposed
/// communication, attributed to the dimension of the collective waited for) or idle after it finished.
struct RankTimes {
  double finish_s = 0;
  double compute_s = 0;
  std::vector<double> exposed_s;  ///< per grid dimension
  /// Of compute_s, the time kernels lost beside communication (Job::compute_slowdown_beside_comm).
  double slowed_s = 0;
};

struct RunResult {
  std::string backend;
  double iteration_s = 0;  ///< the slowest rank's finish time
  std::vector<RankTimes> ranks;
  std::vector<double> rank0_wire_bytes;          ///< per dimension, bytes rank 0 put on the wire
  std::vector<std::uint64_t> rank0_collectives;  ///< per dimension
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  double wall_s = 0;
  /// Per link, when the run was asked to meter links (link_meter.hpp); else empty.
  std::vector<double> link_bytes;
  std::vector<double> link_busy_s;
  /// link_bytes split by the grid dimension whose collectives sent them (empty for an idle dimension).
  std::vector<std::vector<double>> link_bytes_by_dim;
};

/// The result a simulating runtime returns once every rank has finished: the iteration ends with the
/// slowest rank, and rank 0's collective counts come from the plan. One place, so that the fast core
/// and SimGrid report alike.
[[nodiscard]] RunResult finished_run(std::string backend, const schedule::Plan& plan, std::vector<RankTimes> ranks,
                                     std::vector<double> rank0_wire_bytes, std::uint64_t events, std::uint64_t flows);

/// Called once per executed op of an observed rank: op index in the rank's stream, start and end time.
/// For a CollStart the interval is post to completion; for a Wait, the time blocked.
using OpObserver = std::function<void(Rank rank, std::uint32_t op_index, double t_start_s, double t_end_s)>;

/// One OpObserver call, recorded: plain data, so that runtimes working in other processes (SimGrid's
/// forked child, the emulation's MPI ranks) can ship it as bytes and replay it.
struct ObservedOp {
  Rank rank = 0;
  std::uint32_t op_index = 0;
  double t_start_s = 0;
  double t_end_s = 0;
};
static_assert(std::is_trivially_copyable_v<ObservedOp>);

class Runtime {
 public:
  virtual ~Runtime() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// `observe(rank)` says which ranks report to `observer` (both may be empty).
  [[nodiscard]] virtual RunResult run(const Job& job, const std::function<bool(Rank)>& observe,
                                      const OpObserver& observer) = 0;
};

}  // namespace exasim::runtime
