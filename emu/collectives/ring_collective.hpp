#pragma once
// Ring all-gather and reduce-scatter over MPI non-blocking point-to-point, the algorithm NCCL/RCCL run
// on GPUs and the one the simulator models (p-1 steps, each moving one block of S/p bytes to the right
// neighbour while receiving one from the left). Also the phases of the hierarchical collectives
// (hierarchical_collective.hpp), which run rings on sub-communicators.
//
// Why not MPI_Iallgather / MPI_Ireduce_scatter_block: Open MPI's libnbc runs them as "linear" exchanges
// (every member sends to every other member in one round) or reduces at one root. Their latency does
// not grow with p-1 steps as a ring's does, so one calibrated (step latency, bandwidth) pair could not
// describe them and the all-reduce (libnbc's ring) at once: the fit of the host mixed two algorithms
// and was off by 30% rms. With rings for every kind, a step is the same handshake everywhere.
//
// A step is posted only when the previous one completed, from test(): like libnbc's schedules, the
// ring advances only when its rank calls into it (the emulator tests every poll interval).
//
// LIMITATIONS:
//  - no reduction arithmetic: the received block is forwarded as it is (the GPU sums at HBM speed;
//    see gpu_side_reduction in mpi_progress.hpp); the bytes still move;
//  - members must start their rings of one communicator in the same order (the plans do): the tag is
//    derived from the per-communicator sequence number of the collective (collective_tag).

#include <mpi.h>

#include <cstdint>

namespace exasim::emu {

enum class RingKind : std::uint8_t { AllGather, ReduceScatter };

class RingCollective {
 public:
  /// All-gather: `send` holds `block` floats, `recv` p blocks (block i from member i; the member's own
  /// block is not copied there: that copy is the GPU's, at HBM speed, not the host's).
  /// Reduce-scatter: `send` holds p blocks, `recv` p blocks (the member's own result ends in block
  /// `rank`; the others are scratch for the blocks passing through). `send` may be `recv` itself: a
  /// step never sends and receives the same block.
  void start(RingKind kind, const float* send, float* recv, int block, MPI_Comm comm, int tag);
  /// Advances the ring (completes the current step, posts the next); true once every step is done.
  bool test();
  [[nodiscard]] bool done() const { return step_ >= steps_; }
  /// Bytes this member has sent so far in this ring (what it puts on the wire: (p-1) blocks in all).
  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  void post_step();

  RingKind kind_ = RingKind::AllGather;
  const float* send_ = nullptr;
  float* recv_ = nullptr;
  int block_ = 0, rank_ = 0, size_ = 1, step_ = 0, steps_ = 0, tag_ = 0;
  std::uint64_t bytes_sent_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

}  // namespace exasim::emu
