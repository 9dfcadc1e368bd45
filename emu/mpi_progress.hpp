#pragma once
// Waiting on MPI requests the way every part of exasim-emu waits: test, then sleep one poll interval,
// so that blocked ranks leave the cores to the ranks that are copying; abort the whole job with a clear
// message when nothing completes within the timeout (a dead or hung rank must never hang the run).
// The microbenchmarks wait exactly like the emulated iterations, so calibration measures the same
// software path that validation runs.

#include "emu/collectives/pending_comm.hpp"
#include "emu/emulated_gpu.hpp"

#include <mpi.h>

#include <string>

namespace exasim::emu {

/// The reduction exasim-emu's collectives use: a commutative operation that leaves the target as it
/// is. On a GPU the reduction arithmetic runs in the collective's kernels at HBM speed; summing floats
/// on the host CPU would instead add a CPU cost that GPUs do not pay and that differs per collective
/// kind (libnbc reduces more often in reduce-scatter than in all-reduce). The bytes still move.
[[nodiscard]] MPI_Op gpu_side_reduction();

class Poller {
 public:
  Poller(const EmulatedGpu& gpu, double timeout_s) : gpu_(gpu), timeout_s_(timeout_s) {}

  /// Blocks until `request` completes; `what` names it in the timeout message.
  void wait(MPI_Request& request, const std::string& what) const;
  /// Blocks until `comm` (a request or a ring) completes.
  void wait(PendingComm& comm, const std::string& what) const;
  /// Blocks until all `n` requests complete.
  void wait_all(MPI_Request* requests, int n, const std::string& what) const;
  /// A barrier on `comm` that sleeps instead of spinning.
  void barrier(MPI_Comm comm, const std::string& what) const;
  /// Ends the job: prints "exasim-emu: rank R: MESSAGE" and calls MPI_Abort (exit code 3).
  [[noreturn]] static void abort_job(const std::string& message);
  /// Checks the timeout of a wait that began at `since_s` (MPI_Wtime) and aborts when exceeded.
  void check_timeout(double since_s, const std::string& what) const;

 private:
  const EmulatedGpu& gpu_;
  double timeout_s_;
};

}  // namespace exasim::emu
