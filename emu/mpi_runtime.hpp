#pragma once
// The MPI runtime: executes a plan on real MPI processes, one per rank, with real buffers and the
// plan's overlap structure, on an emulated GPU; times every op.
//
// Per grid dimension the world communicator is split into the rank's group (ordered by coordinate).
// CollStart posts the collective with the algorithm the scenario's collectives.algorithm gives it
// (collectives/group_layout.hpp): under ring, MPI_Iallreduce (libnbc's ring) or a ring all-gather /
// reduce-scatter over MPI_Isend/MPI_Irecv (collectives/ring_collective.hpp); under tree, all-reduces as
// a double binary tree (collectives/tree_all_reduce.hpp); under hierarchical, ring phases on the
// intra-node and equal-local-index sub-communicators of groups that span nodes evenly, split once per
// group (collectives/hierarchical_collective.hpp); all on float buffers of the plan's size (Send/Recv:
// MPI_Isend / MPI_Irecv to the partner at coordinate own + peer, plan.hpp);
// Every CollStart is posted to MPI at once, also behind a running collective of its group, and MPI
// progresses them beside each other (NCCL would run them one at a time; the calibrated machine says
// collectives.group_order "concurrent" so that the simulator does as this runtime does). Queued here,
// each next collective would start only at its members' next poll, and on small-message cases those
// gaps, not the collectives, set the time (small-messages: -17 and -20% queued, +0.4 and +1.1% posted
// at once).
// Wait blocks until that request completes; Compute runs the emulated GPU, which keeps testing the
// outstanding requests so that they progress under it. Buffers are allocated per handle slot on first
// use and reused (they only grow), never per op.
//
// An iteration starts after a barrier; times are seconds from each rank's barrier exit, and the trace's
// records, where every rank runs on one host, from the first rank's exit (one monotonic clock). Warm-up
// iterations run first and are discarded; of the measured iterations the median (by the slowest rank's
// finish) is reported; every measured iteration's records are gathered on rank 0 (their op classes go
// into the summary, so that a validation's class medians count every iteration, not one per emulation).
//
// LIMITATIONS:
//  - Buffers are floats whatever the plan's dtype (S bytes = S/4 floats), and reductions move bytes
//    without summing them (gpu_side_reduction in mpi_progress.hpp): the GPU's arithmetic is not the
//    host CPU's to emulate.
//  - Open MPI picks the algorithm of the ring all-reduce (libnbc); `exasim emulate` asks it for its
//    ring (see validate/mpirun.hpp), the algorithm the simulator models. Every other collective is
//    exasim's own over point-to-point messages, whose bytes are counted (rank0_wire_bytes).
//  - Clocks of different hosts are not synchronised: across hosts, each rank's records count from its own
//    exit from the start barrier, so cross-rank skew in the trace is off by the barrier's exit skew
//    (tens of microseconds to a poll interval and a wake-up). On one host they share the clock.

#include "emu/emulation_options.hpp"
#include "emu/trace_records.hpp"
#include "sim/runtime/runtime.hpp"
#include "topologies/topology.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace exasim::emu {

class MpiRuntime final : public runtime::Runtime {
 public:
  /// MPI must be initialised; the world size must equal the plan's. `topology` (the scenario's machine,
  /// which must outlive run()) says which node each rank is on, for the hierarchical algorithm.
  MpiRuntime(EmulationOptions options, const topo::Topology& topology);
  ~MpiRuntime() override;
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  [[nodiscard]] std::string name() const override { return "mpi"; }
  /// Collective over all ranks. On rank 0 the result holds every rank's times and `observer` sees the
  /// ops of every observed rank; on the other ranks it holds only their own times.
  [[nodiscard]] runtime::RunResult run(const runtime::Job& job, const std::function<bool(runtime::Rank)>& observe,
                                       const runtime::OpObserver& observer) override;

  /// Iteration time of every measured iteration (the slowest rank's finish), after run().
  [[nodiscard]] const std::vector<double>& iteration_times_s() const { return iterations_s_; }
  /// Collectives this rank ran in the reported iteration, per algorithm ("ring", "tree", "hierarchical",
  /// "mpi"), after run(): what collectives.algorithm (auto included) became on this rank's groups.
  [[nodiscard]] const std::map<std::string, std::uint64_t>& collectives_by_algorithm() const { return by_algorithm_; }
  /// Mean lateness of this rank's compute sleeps, after run() (a health figure).
  [[nodiscard]] double mean_sleep_overshoot_s() const { return overshoot_s_; }
  /// Per rank (on rank 0; empty elsewhere), after run(): the host time the reported iteration spent in
  /// compute ops and in posting collectives that the plan overlaps with compute: the compute the host
  /// really ran for its emulated GPU, whose own timeline (the trace, RankTimes::compute_s) runs each op
  /// for its modelled time.
  [[nodiscard]] const std::vector<double>& host_compute_per_rank_s() const { return host_compute_s_; }
  /// Per rank (on rank 0; empty elsewhere), after run(): the host delay no later compute op of the
  /// reported iteration paid back, because a wait that blocked absorbed it or the iteration ended
  /// first. A rank's host compute exceeds its plan's by this much (emulated_gpu.hpp).
  [[nodiscard]] const std::vector<double>& unpaid_delay_per_rank_s() const { return unpaid_delay_s_; }
  /// On rank 0 (empty maps elsewhere), after run(): the op classes (traces/op_classes.hpp) of every
  /// rank's records of each measured iteration, in the order they ran.
  [[nodiscard]] const std::vector<std::map<std::string, double>>& iteration_op_classes() const {
    return iteration_op_classes_;
  }

 private:
  struct Impl;
  EmulationOptions options_;
  const topo::Topology& topology_;
  std::vector<double> iterations_s_;
  std::map<std::string, std::uint64_t> by_algorithm_;
  double overshoot_s_ = 0;
  std::vector<double> host_compute_s_;
  std::vector<double> unpaid_delay_s_;
  std::vector<std::map<std::string, double>> iteration_op_classes_;
};

}  // namespace exasim::emu
