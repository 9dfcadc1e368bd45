#pragma once
// Hierarchical collectives: ring phases on two sub-communicators of a group that spans N > 1 nodes with
// L > 1 members on each. `intra` holds the L members of this member's node, `inter` the N members of
// the group that have this member's local index (one per node), ordered by group coordinate and by node
// (HierarchicalComms makes them once per group). The simulator's router runs the same phases
// (sim/collectives/algorithm.hpp):
//  - all-reduce of S: intra-node ring reduce-scatter (blocks of S/L), inter-node ring all-reduce of
//    this member's S/L (a reduce-scatter then an all-gather, blocks of S/(L N)), intra-node ring
//    all-gather of S/L blocks;
//  - all-gather: inter-node ring all-gather of S/(L N) blocks into this member's S/L region, then an
//    intra-node ring all-gather of the S/L regions;
//  - reduce-scatter: the reverse, intra-node then inter-node.
// A member sends (L-1)/L S per intra phase and (N-1)/N S/L per inter ring phase: the inter-node links
// carry 1/L of what a flat ring puts on them, which is why NCCL-like libraries split this way.
//
// Phases run one after the other (each is a RingCollective) and advance from test(), like a ring.
//
// LIMITATIONS:
//  - no reduction arithmetic (gpu_side_reduction in mpi_progress.hpp); the bytes still move. The
//    all-gather copies this member's own block into its region on the host (the intra-node phase
//    forwards it): S/p bytes that a GPU copies at HBM speed;
//  - regions of the receive buffer follow (local index, node), not group order: region j (S/L) holds
//    the blocks of the members of local index j in node order. Nothing reads them (the GPU's data is not
//    the host's to emulate), but a reader expecting block i of member i would be wrong;
//  - the phases do not overlap each other (NCCL pipelines them in chunks): a hierarchical collective
//    pays every phase's steps one after the other.

#include "emu/collectives/ring_collective.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace exasim::emu {

enum class HierarchicalKind : std::uint8_t { AllReduce, AllGather, ReduceScatter };

/// The two sub-communicators of one group, made once (MPI_Comm_split is collective over the group).
class HierarchicalComms {
 public:
  HierarchicalComms() = default;
  /// Collective over `group`: every member passes its node (distinct nodes, distinct ints, in the order
  /// the inter-node rings follow), its local index on that node and its coordinate in the group.
  HierarchicalComms(MPI_Comm group, int node, int local_index, int coordinate);
  ~HierarchicalComms();
  HierarchicalComms(HierarchicalComms&& other) noexcept;
  HierarchicalComms& operator=(HierarchicalComms&& other) noexcept;
  HierarchicalComms(const HierarchicalComms&) = delete;
  HierarchicalComms& operator=(const HierarchicalComms&) = delete;

  [[nodiscard]] bool valid() const { return intra_ != MPI_COMM_NULL; }
  [[nodiscard]] MPI_Comm intra() const { return intra_; }
  [[nodiscard]] MPI_Comm inter() const { return inter_; }

 private:
  void release();
  MPI_Comm intra_ = MPI_COMM_NULL, inter_ = MPI_COMM_NULL;
};

class HierarchicalCollective {
 public:
  /// `n` floats: the whole buffer S (all-gather: `send` holds n / (L N) floats, `recv` n; otherwise both
  /// hold n). n must be divisible by L N (emulated_elements makes it so). Phase k uses tag `tag + k`
  /// (k < 4): the caller reserves four tags.
  void start(HierarchicalKind kind, const float* send, float* recv, std::size_t n, const HierarchicalComms& comms,
             int tag);
  /// Advances the current phase, starting the next when it ends; true once the last phase is done.
  bool test();
  /// Bytes this member has sent so far, over all phases.
  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_done_ + ring_.bytes_sent(); }

 private:
  struct Phase {
    RingKind kind = RingKind::AllGather;
    const float* send = nullptr;
    float* recv = nullptr;
    int block = 0;
    MPI_Comm comm = MPI_COMM_NULL;
  };
  void start_phase();

  Phase phases_[4];
  int count_ = 0, current_ = 0, tag_ = 0;
  std::uint64_t bytes_done_ = 0;  ///< of the phases before the current one
  RingCollective ring_;
};

}  // namespace exasim::emu
