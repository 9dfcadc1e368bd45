#pragma once
// A communication of exasim-emu in flight: an MPI library request (libnbc's all-reduce, a Send/Recv, a
// barrier, or with `--collectives mpi` any collective) or one of exasim's own collectives over
// point-to-point messages (ring, double binary tree, hierarchical, direct). One PendingComm lives in
// each handle slot of the emulated plan and is reused by every collective posted there, so the
// algorithms' scratch buffers are allocated once, not per collective.
//
// start() runs a collective under the algorithm the simulator's registry names for it
// (collectives::emulated_by): pending_comm.cpp holds one runner per algorithm the emulation can run,
// each starting its class here; an algorithm with a new MPI class adds the class and its runner there.
//
// LIMITATIONS: the bytes an MPI library request moves are not known here (bytes_sent() is empty for
// them); the runtime uses the ring closed form for those, which is what libnbc's ring all-reduce sends.

#include "emu/collectives/direct_collective.hpp"
#include "emu/collectives/hierarchical_collective.hpp"
#include "emu/collectives/ring_collective.hpp"
#include "emu/collectives/tree_all_reduce.hpp"
#include "sim/collectives/algorithm.hpp"

#include <mpi.h>

#include <cstdint>
#include <optional>

namespace exasim::emu {

/// One collective of the plan, as a runner needs it.
struct CollectiveArgs {
  schedule::CollKind kind = schedule::CollKind::AllReduce;  ///< never Send/Recv
  const float* send = nullptr;
  float* recv = nullptr;
  std::size_t n = 0;  ///< floats of the whole buffer S, divisible by the group size (emulated_elements)
  MPI_Comm comm = MPI_COMM_NULL;
  const HierarchicalComms* node_comms = nullptr;  ///< the group's sub-communicators, where split
  MPI_Op reduction = MPI_SUM;                     ///< for the MPI library's all-reduce
  int tag = 0;                                    ///< the collective's first tag (collective_tag)
};

class PendingComm {
 public:
  /// Whether start() has a runner for `algorithm` (one that emulated_by can answer).
  [[nodiscard]] static bool can_run(collectives::Algorithm algorithm);
  /// Starts `args` as `algorithm` runs it. std::logic_error where it has no runner or cannot run this
  /// collective (tree: all-reduce only; hierarchical: without node_comms).
  void start(collectives::Algorithm algorithm, const CollectiveArgs& args);

  /// Each accessor makes that communication the active one; start it right after.
  MPI_Request* request() {
    active_ = Active::Request;
    return &request_;
  }
  RingCollective& ring() {
    active_ = Active::Ring;
    return ring_;
  }
  TreeAllReduce& tree() {
    active_ = Active::Tree;
    return tree_;
  }
  HierarchicalCollective& hierarchical() {
    active_ = Active::Hierarchical;
    return hierarchical_;
  }
  DirectCollective& direct() {
    active_ = Active::Direct;
    return direct_;
  }
  /// Progresses it; true when complete.
  bool test();
  /// Bytes this member sent, counted by exasim's own collectives; empty for an MPI library request.
  [[nodiscard]] std::optional<std::uint64_t> bytes_sent() const;

 private:
  enum class Active : std::uint8_t { Request, Ring, Tree, Hierarchical, Direct };
  Active active_ = Active::Request;
  MPI_Request request_ = MPI_REQUEST_NULL;
  RingCollective ring_;
  TreeAllReduce tree_;
  HierarchicalCollective hierarchical_;
  DirectCollective direct_;
};

/// Tags of exasim's collectives: `part` (0-3: a tree's two trees, a hierarchical collective's phases,
/// a direct all-reduce's two phases) of the collective with this sequence number on its communicator.
/// Tag 0 stays the plans' Send/Recv; sequence numbers wrap after 8000 collectives (MPI_TAG_UB is at
/// least 32767), far more than a plan keeps in flight on one communicator.
[[nodiscard]] int collective_tag(std::uint64_t sequence, int part = 0);
inline constexpr int kTagsPerCollective = 4;

}  // namespace exasim::emu
