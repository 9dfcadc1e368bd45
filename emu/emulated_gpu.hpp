#pragma once
// The emulated GPU of exasim-emu: a compute op occupies the rank for the GPU model's time, while the
// rank keeps testing its outstanding non-blocking collectives so that they progress under the compute,
// as they would on a real GPU whose communication runs beside its kernels.
//
// Why polling and not an MPI progress thread: Open MPI's shared-memory transport and its non-blocking
// collectives (libnbc) only advance inside MPI calls. A progress thread would need MPI_THREAD_MULTIPLE
// and would spin on a core all the time; with 4-8 ranks on 2 cores it would steal the CPU the copies
// need. Testing every poll interval from the compute loop, and sleeping in between, costs a few
// microseconds per poll and leaves the cores to whoever is copying.
//
// LIMITATIONS:
//  - Sleep wakes up late by the scheduler's latency; the overshoot is learned (moving average) and the
//    next sleep ends that much earlier, so compute ops are right on average, not each one.
//  - Cpu mode runs real GEMM tiles until the model's time is up: it loads cores and caches like real
//    work but its duration is still the model's, not the CPU's speed for that GEMM.
//  - A poll that copies (Open MPI moves a large message inside MPI_Test) can end an op late. The GPU
//    would have kept computing while its copy engine moved the data, so the lateness is carried as
//    debt and the next compute ops end that much earlier: the GPU's timeline stays on schedule on
//    average, individual ops may be off by the length of one copy.
//  - Time the host spends posting a collective that the plan overlaps with compute is debt too
//    (mpi_runtime.cpp): the GPU would have computed meanwhile. Posting one that is waited for before
//    any compute (a pipeline exchange) is not: the GPU would have idled, and the time is exposed
//    communication. A wait that blocks absorbs the debt: the GPU reached it that much earlier and
//    idled until the data came, so the wait counts from there and the compute after it runs in full
//    (paying the debt back after a wait would run that compute short: up to 11 ms of a 127 ms
//    iteration per rank on 8 ranks of a 2-core host). Debt is cleared at each iteration's start, so
//    one iteration's host delays never shorten the next one's compute.
//  - The trace records compute ops and waits on the GPU's timeline (host time less the debt), so a
//    compute op lasts its modelled time there; the host's own time in compute ops is reported beside
//    it (MpiRuntime::host_compute_per_rank_s). Collectives are recorded from the host's post to the
//    completion it saw: the data cannot move before the host posts.
//  - Communication progresses only at poll points: a collective's completion is seen up to one poll
//    interval late.

#include "emu/emulation_options.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace exasim::emu {

/// Seconds on a monotonic clock (the one compute deadlines use).
[[nodiscard]] double monotonic_s();

class EmulatedGpu {
 public:
  EmulatedGpu(ComputeMode mode, double poll_interval_s);

  /// Occupies the caller for `seconds`. `progress()` is called at least every poll interval and returns
  /// whether communication is still outstanding (when none is, sleep mode sleeps straight to the end).
  void run(double seconds, const std::function<bool()>& progress);

  /// Sleeps one poll interval (used while blocked in a Wait, so that waiting ranks leave the cores to
  /// the ranks that copy).
  void pause() const;

  /// Host time the GPU's timeline should not have lost (posting an overlapped collective): the next
  /// compute ops end that much earlier.
  void add_debt(double seconds) { debt_s_ += std::max(0.0, seconds); }
  /// Forgets the debt (an iteration's start: the barrier already waited for every rank).
  void clear_debt() { debt_s_ = 0; }

  [[nodiscard]] double mean_overshoot_s() const { return overshoot_s_; }
  [[nodiscard]] double debt_s() const { return debt_s_; }

 private:
  void sleep_until(double deadline_s) const;
  void gemm_tile();

  ComputeMode mode_;
  double poll_s_;
  double overshoot_s_ = 0;  ///< learned lateness of a sleep's wake-up
  double debt_s_ = 0;       ///< how late past ops ended (paid back by the next ones)
  std::vector<float> a_, b_, c_;
};

}  // namespace exasim::emu
