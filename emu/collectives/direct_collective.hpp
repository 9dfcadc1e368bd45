#pragma once
// Direct collectives over MPI non-blocking point-to-point: every member exchanges one block of S/p with
// every other member at once, the pattern the simulator's `direct` algorithm routes
// (sim/collectives/algorithms/direct.cpp):
//  - all-gather: this member's block to each of the p-1 others; block j of `recv` from member j;
//  - reduce-scatter: block j of `send` to member j; member j's contribution to this member's block
//    lands in block j of `recv` (scratch: no reduction arithmetic, see below);
//  - all-reduce: a direct reduce-scatter, then a direct all-gather of this member's block.
// A member sends (p-1)/p S a phase: the ring's bytes in one step instead of p-1.
//
// Phases run one after the other and advance from test(), like a ring: every send and receive of a
// phase is posted at once (send first, as the ring does), the next phase when all have completed.
//
// LIMITATIONS:
//  - no reduction arithmetic (gpu_side_reduction in mpi_progress.hpp); the bytes still move. The
//    all-reduce's block of this member is its input block, copied into `recv` on the host before the
//    all-gather phase sends it (the GPU would hold the reduced block there);
//  - members must start their collectives of one communicator in the same order (the plans do): each
//    phase's tag is derived from the collective's sequence number (collective_tag).

#include "sim/schedule/plan.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace exasim::emu {

class DirectCollective {
 public:
  /// A collective of `kind` (not Send/Recv) of `n` floats: the whole buffer S, p blocks of n / p
  /// (all-gather: `send` holds one block, `recv` n; otherwise both hold n). Phase k uses tag `tag + k`
  /// (k < 2).
  void start(schedule::CollKind kind, const float* send, float* recv, std::size_t n, MPI_Comm comm, int tag);
  /// Completes the current phase if it can, posting the next; true once the last phase is done.
  bool test();
  /// Bytes this member has sent so far, over all phases.
  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  /// Posts phase `phase_` (a reduce-scatter or an all-gather).
  void post_phase();

  schedule::CollKind kind_ = schedule::CollKind::AllGather;
  const float* send_ = nullptr;
  float* recv_ = nullptr;
  std::size_t block_ = 0;
  int rank_ = 0, size_ = 1, phase_ = 0, phases_ = 0, tag_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::uint64_t bytes_sent_ = 0;
  std::vector<MPI_Request> requests_;  ///< of the current phase (grows, never shrinks)
};

}  // namespace exasim::emu
