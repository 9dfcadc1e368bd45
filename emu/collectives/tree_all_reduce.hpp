#pragma once
// NCCL's double binary tree all-reduce over MPI non-blocking point-to-point: the trees of
// sim/collectives/double_binary_tree.hpp (the simulator's router uses the same index arithmetic), tree 0
// carrying the first half of the buffer and tree 1 the second. In each tree the half is cut into chunks
// that are reduced up to the root (a member sends chunk c to its parent once it has chunk c from every
// child) and broadcast down (a member forwards chunk c to its children once it has it from its parent;
// the root as soon as its children's chunk c arrived). Chunks move independently, so chunk c+1 climbs
// while chunk c descends: the pipelining that lets a tree approach the bandwidth of one link.
//
// A member sends S/2 x (1 if it has a parent + its number of children) per tree (tree_wire_bytes in
// sim/collectives/algorithm.hpp): S to 2S over both trees (about 2S for a member inner in one tree and a
// leaf in the other), against a ring's 2 (p-1)/p S, in about 2 log2(p) + chunks steps instead of
// 2 (p-1).
//
// Like RingCollective, it advances only from test() (the emulated GPU's poll loop), posting what the
// completed requests allow; messages of one tree between two members go in one direction and in chunk
// order, so one tag per tree keeps them matched (MPI does not overtake on one tag).
//
// LIMITATIONS:
//  - no reduction arithmetic (gpu_side_reduction in mpi_progress.hpp): an inner member forwards the
//    chunk of its first child; the second child's chunk lands in a scratch buffer. The bytes still move;
//  - trees span the communicator's members in rank order (NCCL builds them over nodes, with a chain
//    inside each node);
//  - chunks are a fixed size (the caller's), not NCCL's tuned per-protocol slices.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace exasim::emu {

/// Chunk size the emulator pipelines its tree all-reduces in (bytes): large enough that a chunk's
/// handshake (tens of microseconds on an oversubscribed host) stays small beside its copy, small enough
/// that the 1-6 MiB all-reduces of the validation cases pipeline over a few chunks.
inline constexpr std::size_t kTreeChunkBytes = 512 * 1024;

class TreeAllReduce {
 public:
  /// `send` and `recv` hold `n` floats; chunks of at most `chunk` floats (>= 1). Tree t uses tag
  /// `tag + t`: the caller reserves two tags.
  void start(const float* send, float* recv, std::size_t n, std::size_t chunk, MPI_Comm comm, int tag);
  /// Posts what completed requests allow; true once every chunk went up and down both trees.
  bool test();
  /// Bytes this member has sent so far.
  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  /// One tree's part: its links, its range of the buffer, and per chunk the requests in flight.
  struct Tree {
    std::int64_t parent = -1;
    std::int64_t children[2] = {-1, -1};
    std::size_t begin = 0, count = 0, chunks = 0;
    int tag = 0;
    /// Chunks whose send up was posted, whose receive down was posted, whose sends down were posted
    /// (each in chunk order: the order the peer posts its matching calls in).
    std::size_t up = 0, down_recv = 0, down_send = 0;
    std::size_t finished = 0;  ///< chunks whose sends down have completed
    /// Per chunk: [0, 1] receives from the children, [2] send up, [3] receive down, [4, 5] sends down.
    std::vector<MPI_Request> requests;
  };

  void start_tree(Tree& t, int index);
  bool advance(Tree& t);
  [[nodiscard]] bool complete(Tree& t, std::size_t chunk, int first, int count);
  [[nodiscard]] std::size_t chunk_begin(const Tree& t, std::size_t c) const;
  [[nodiscard]] int chunk_count(const Tree& t, std::size_t c) const;

  const float* send_ = nullptr;
  float* recv_ = nullptr;
  std::size_t n_ = 0, chunk_ = 1;
  int rank_ = 0, size_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::uint64_t bytes_sent_ = 0;
  Tree trees_[2];
  std::vector<float> scratch_;  ///< the second child's chunks (grows, never shrinks: no allocation per call)
};

}  // namespace exasim::emu
