#include "emu/collectives/direct_collective.hpp"

#include <algorithm>

namespace exasim::emu {

using schedule::CollKind;

void DirectCollective::start(CollKind kind, const float* send, float* recv, std::size_t n, MPI_Comm comm, int tag) {
  kind_ = kind;
  send_ = send;
  recv_ = recv;
  comm_ = comm;
  tag_ = tag;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  block_ = n / static_cast<std::size_t>(size_);
  bytes_sent_ = 0;
  phase_ = 0;
  phases_ = size_ < 2 ? 0 : kind == CollKind::AllReduce ? 2 : 1;
  if (phases_ > 0) post_phase();
}

void DirectCollective::post_phase() {
  // The all-reduce's first phase is a reduce-scatter, its second an all-gather.
  const bool gather = kind_ == CollKind::AllGather || (kind_ == CollKind::AllReduce && phase_ == 1);
  const auto block = [&](const float* base, int b) { return base + static_cast<std::ptrdiff_t>(b) * block_; };
  const float* own = kind_ == CollKind::AllGather ? send_ : recv_ + static_cast<std::ptrdiff_t>(rank_) * block_;
  if (kind_ == CollKind::AllReduce && phase_ == 1)
    std::copy(block(send_, rank_), block(send_, rank_ + 1), recv_ + static_cast<std::ptrdiff_t>(rank_) * block_);
  const int count = static_cast<int>(block_);
  requests_.assign(2 * static_cast<std::size_t>(size_ - 1), MPI_REQUEST_NULL);
  std::size_t r = 0;
  // Peer order rank+1, rank+2, ... as the router's: every member starts with a different peer.
  for (int d = 1; d < size_; ++d) {
    const int to = (rank_ + d) % size_, from = (rank_ - d + size_) % size_;
    MPI_Isend(gather ? own : block(send_, to), count, MPI_FLOAT, to, tag_ + phase_, comm_, &requests_[r++]);
    MPI_Irecv(recv_ + static_cast<std::ptrdiff_t>(from) * block_, count, MPI_FLOAT, from, tag_ + phase_, comm_,
              &requests_[r++]);
    bytes_sent_ += block_ * sizeof(float);
  }
}

bool DirectCollective::test() {
  while (phase_ < phases_) {
    int flag = 0;
    MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &flag, MPI_STATUSES_IGNORE);
    if (!flag) return false;
    if (++phase_ < phases_) post_phase();
  }
  return true;
}

}  // namespace exasim::emu
