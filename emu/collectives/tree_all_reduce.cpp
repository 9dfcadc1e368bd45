#include "emu/collectives/tree_all_reduce.hpp"

#include "sim/collectives/double_binary_tree.hpp"

#include <algorithm>

namespace exasim::emu {

namespace {
// Request slots of one chunk (Tree::requests holds kPerChunk per chunk).
constexpr int kFromChildren = 0, kUp = 2, kDown = 3, kToChildren = 4, kPerChunk = 6;
}  // namespace

void TreeAllReduce::start(const float* send, float* recv, std::size_t n, std::size_t chunk, MPI_Comm comm, int tag) {
  send_ = send;
  recv_ = recv;
  n_ = n;
  chunk_ = std::max<std::size_t>(chunk, 1);
  comm_ = comm;
  bytes_sent_ = 0;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  if (scratch_.size() < n) scratch_.resize(n);
  trees_[0].begin = 0;
  trees_[0].count = n / 2;
  trees_[1].begin = n / 2;
  trees_[1].count = n - n / 2;
  for (int t = 0; t < 2; ++t) {
    trees_[t].tag = tag + t;
    start_tree(trees_[t], t);
  }
}

std::size_t TreeAllReduce::chunk_begin(const Tree& t, std::size_t c) const { return t.begin + c * chunk_; }

int TreeAllReduce::chunk_count(const Tree& t, std::size_t c) const {
  return static_cast<int>(std::min(chunk_, t.count - c * chunk_));
}

void TreeAllReduce::start_tree(Tree& t, int index) {
  const auto links = collectives::double_binary_tree_links(static_cast<std::uint32_t>(size_),
                                                           static_cast<std::uint32_t>(rank_), index);
  t.parent = links.parent;
  t.children[0] = links.children[0];
  t.children[1] = links.children[1];
  t.chunks = (t.count + chunk_ - 1) / chunk_;
  t.up = t.down_recv = t.down_send = t.finished = 0;
  t.requests.assign(t.chunks * kPerChunk, MPI_REQUEST_NULL);
  // Every receive from the children is posted at once, in chunk order (the order they send in): a
  // child's chunk can then arrive whenever the child is ready, as in NCCL's pipelined trees.
  for (std::size_t c = 0; c < t.chunks; ++c)
    for (int k = 0; k < 2; ++k) {
      if (t.children[k] < 0) continue;
      float* into = (k == 0 ? recv_ : scratch_.data()) + chunk_begin(t, c);
      MPI_Irecv(into, chunk_count(t, c), MPI_FLOAT, static_cast<int>(t.children[k]), t.tag, comm_,
                &t.requests[c * kPerChunk + kFromChildren + k]);
    }
  (void)advance(t);
}

bool TreeAllReduce::complete(Tree& t, std::size_t chunk, int first, int count) {
  int flag = 0;
  MPI_Testall(count, &t.requests[chunk * kPerChunk + first], &flag, MPI_STATUSES_IGNORE);
  return flag != 0;
}

bool TreeAllReduce::advance(Tree& t) {
  // What goes up stands for the partial sum: the input at a leaf, else a child's chunk as received.
  const float* partial = t.children[0] >= 0 ? recv_ : t.children[1] >= 0 ? scratch_.data() : send_;
  // Up: chunk c goes to the parent once every child's chunk c is in (a leaf sends at once).
  for (; t.up < t.chunks && complete(t, t.up, kFromChildren, 2); ++t.up) {
    if (t.parent < 0) continue;
    MPI_Isend(partial + chunk_begin(t, t.up), chunk_count(t, t.up), MPI_FLOAT, static_cast<int>(t.parent), t.tag, comm_,
              &t.requests[t.up * kPerChunk + kUp]);
    bytes_sent_ += static_cast<std::uint64_t>(chunk_count(t, t.up)) * sizeof(float);
  }
  // Down, receive: the parent's chunk c overwrites recv's chunk c, so only once chunk c's send up
  // (which may read that memory) has completed. The root has nothing to receive.
  if (t.parent < 0) t.down_recv = t.up;
  for (; t.down_recv < t.up && complete(t, t.down_recv, kUp, 1); ++t.down_recv)
    MPI_Irecv(recv_ + chunk_begin(t, t.down_recv), chunk_count(t, t.down_recv), MPI_FLOAT, static_cast<int>(t.parent),
              t.tag, comm_, &t.requests[t.down_recv * kPerChunk + kDown]);
  // Down, send: to every child once the chunk is in (for the root: once its children's chunks are).
  for (; t.down_send < t.down_recv && complete(t, t.down_send, kDown, 1); ++t.down_send)
    for (int k = 0; k < 2; ++k) {
      if (t.children[k] < 0) continue;
      MPI_Isend(recv_ + chunk_begin(t, t.down_send), chunk_count(t, t.down_send), MPI_FLOAT,
                static_cast<int>(t.children[k]), t.tag, comm_, &t.requests[t.down_send * kPerChunk + kToChildren + k]);
      bytes_sent_ += static_cast<std::uint64_t>(chunk_count(t, t.down_send)) * sizeof(float);
    }
  for (; t.finished < t.down_send && complete(t, t.finished, kToChildren, 2); ++t.finished) {}
  return t.finished == t.chunks;
}

bool TreeAllReduce::test() {
  bool done = true;
  for (auto& t : trees_) done = advance(t) && done;
  return done;
}

}  // namespace exasim::emu
