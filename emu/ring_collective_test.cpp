// ring_collective_test: run under mpirun on any number of ranks (ctest: emu:ring-collectives on 3).
// Checks that the ring all-gather delivers block i of member i to every other member, that the
// reduce-scatter ring delivers block `rank` (forwarded unsummed, see ring_collective.hpp: the input
// block of member rank+1, which starts it), and that two rings in flight on one communicator at once
// do not mix their messages (tags).
// Plain main, exit code 0/1: Catch2 does not run inside mpirun ranks here.

#include "emu/ring_collective.hpp"

#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

using exasim::emu::PendingComm;
using exasim::emu::ring_tag;
using exasim::emu::RingKind;

float value(int member, int block, int i) { return static_cast<float>(1000 * member + 10 * block + i % 7); }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  constexpr int kBlock = 5000;  // 20 kB: above Open MPI's eager limit, so the rendezvous path is used
  std::vector<float> ag_send(kBlock), ag_recv(static_cast<std::size_t>(p) * kBlock, -1.0f);
  const auto all = static_cast<std::size_t>(p) * kBlock;
  std::vector<float> rs_send(all), rs_recv(all, -1.0f);
  for (int i = 0; i < kBlock; ++i) ag_send[static_cast<std::size_t>(i)] = value(rank, rank, i);
  for (int b = 0; b < p; ++b)
    for (int i = 0; i < kBlock; ++i) rs_send[static_cast<std::size_t>(b * kBlock + i)] = value(rank, b, i);

  PendingComm ag, rs;
  ag.ring().start(RingKind::AllGather, ag_send.data(), ag_recv.data(), kBlock, MPI_COMM_WORLD, ring_tag(0));
  rs.ring().start(RingKind::ReduceScatter, rs_send.data(), rs_recv.data(), kBlock, MPI_COMM_WORLD, ring_tag(1));
  bool ag_done = false, rs_done = false;
  while (!ag_done || !rs_done) {
    if (!ag_done) ag_done = ag.test();
    if (!rs_done) rs_done = rs.test();
  }

  int bad = 0;
  for (int b = 0; b < p; ++b)  // its own block is the GPU's local copy, not the ring's (ring_collective.hpp)
    for (int i = 0; i < kBlock && b != rank; ++i)
      if (ag_recv[static_cast<std::size_t>(b * kBlock + i)] != value(b, b, i)) ++bad;
  const int starter = (rank + 1) % p;  // the member whose input block `rank` travels the ring
  for (int i = 0; i < kBlock && p > 1; ++i)
    if (rs_recv[static_cast<std::size_t>(rank * kBlock + i)] != value(starter, rank, i)) ++bad;
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("ring collectives on %d ranks: %d wrong values\n", p, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
