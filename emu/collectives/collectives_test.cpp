// collectives_test: exasim-emu's own collectives under mpirun on any number of ranks (ctest:
// emu:collectives-N on 2, 3, 4, 5 and 8 ranks). For each algorithm it checks where the bytes landed
// (what a no-arithmetic collective can promise, see gpu_side_reduction) and that every member sent
// exactly the closed form of the algorithm (counted by the implementation, recomputed here from the
// definitions, not from the implementation):
//  - ring all-gather / reduce-scatter: block i of member i everywhere / block `rank` from the member
//    that starts it; (p-1) S/p each;
//  - tree all-reduce (double binary tree, several chunk sizes, an odd buffer): every member ends with
//    the same buffer, made of the members' inputs; S/2 x (1 if it has a parent + children) per tree;
//  - hierarchical all-reduce / all-gather / reduce-scatter, for every node size L with 1 < L < p
//    dividing p, members on nodes in rank order and interleaved: all-reduce as the tree; all-gather
//    block (node a, local j) in region j; reduce-scatter the block of the member that starts both
//    rings; 2 (L-1)/L S + 2 (N-1)/N S/L, and (L-1)/L S + (N-1)/N S/L;
//  - direct all-gather / reduce-scatter / all-reduce, started through PendingComm::start as the
//    emulation starts them: block j from member j / member j's input block `rank` in block j / as the
//    tree; (p-1) S/p a phase, one phase (two for all-reduce);
//  - collectives of every algorithm in flight at once, tested in a different order on each rank,
//    all complete (a deadlock ends the run after 60 s with a message).
// Plain main, exit code 0/1: Catch2 does not run inside mpirun ranks here. Rank 0 prints one line per
// check: its name, the wrong values and wrong byte counts summed over the ranks.

#include "emu/collectives/pending_comm.hpp"
#include "sim/collectives/double_binary_tree.hpp"

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace exasim::emu;
using exasim::schedule::CollKind;

constexpr int kBlock = 5000;  // 20 kB: above Open MPI's eager limit, so the rendezvous path is used

int g_rank = 0, g_size = 1;
int g_failed = 0;

float value(int member, int block, int i) { return static_cast<float>(1000 * member + 10 * block + i % 7); }

/// Sums the ranks' wrong values and bytes, and prints them on rank 0.
void report(const std::string& name, long wrong_values, std::uint64_t bytes, std::uint64_t expected_bytes) {
  long local[2] = {wrong_values, bytes == expected_bytes ? 0L : 1L}, total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total[0] != 0 || total[1] != 0) ++g_failed;
  if (g_rank == 0)
    std::printf("%-48s p=%d: %ld wrong values, %ld ranks with wrong bytes (rank 0 sent %llu, expected %llu)\n",
                name.c_str(), g_size, total[0], total[1], static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(expected_bytes));
}

/// Waits for all of `comms`, testing them in an order that depends on the rank; aborts after 60 s.
void wait_all(std::vector<PendingComm*> comms, const std::string& what) {
  std::vector<bool> done(comms.size(), false);
  const double start = MPI_Wtime();
  for (std::size_t left = comms.size(); left > 0;) {
    for (std::size_t k = 0; k < comms.size(); ++k) {
      const std::size_t i = (k + static_cast<std::size_t>(g_rank)) % comms.size();
      if (!done[i] && comms[i]->test()) {
        done[i] = true;
        --left;
      }
    }
    if (MPI_Wtime() - start > 60) {
      std::fprintf(stderr, "rank %d: %s did not complete in 60 s (deadlock?)\n", g_rank, what.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
}

/// All-reduce results hold no arithmetic: every member must end with rank 0's buffer, each value some
/// member's input at that position. Returns the wrong values on this rank.
long check_all_reduce(const std::vector<float>& recv) {
  std::vector<float> root(recv);
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  long wrong = 0;
  for (std::size_t i = 0; i < recv.size(); ++i) {
    const int block = static_cast<int>(i / kBlock), at = static_cast<int>(i % kBlock);
    const float member = std::round((recv[i] - value(0, block, at)) / 1000.0f);
    const bool an_input =
        member >= 0 && member < static_cast<float>(g_size) && recv[i] == value(static_cast<int>(member), block, at);
    if (recv[i] != root[i] || !an_input) ++wrong;
  }
  return wrong;
}

std::vector<float> inputs(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = value(g_rank, static_cast<int>(i / kBlock), static_cast<int>(i % kBlock));
  return v;
}

/// Closed form of the tree all-reduce: S/2 per link of this member (its parent, its children) per tree.
std::uint64_t tree_bytes(std::size_t n) {
  const std::size_t half[2] = {n / 2, n - n / 2};
  std::uint64_t bytes = 0;
  for (int t = 0; t < 2; ++t) {
    const auto links = exasim::collectives::double_binary_tree_links(static_cast<std::uint32_t>(g_size),
                                                                     static_cast<std::uint32_t>(g_rank), t);
    const int n_links = (links.parent >= 0) + (links.children[0] >= 0) + (links.children[1] >= 0);
    bytes += static_cast<std::uint64_t>(n_links) * half[t] * sizeof(float);
  }
  return bytes;
}

void test_rings() {
  const int p = g_size;
  const auto all = static_cast<std::size_t>(p) * kBlock;
  std::vector<float> ag_send = inputs(kBlock), ag_recv(all, -1.0f);
  for (int i = 0; i < kBlock; ++i) ag_send[static_cast<std::size_t>(i)] = value(g_rank, g_rank, i);
  std::vector<float> rs_send = inputs(all), rs_recv(all, -1.0f);
  PendingComm ag, rs;
  ag.ring().start(RingKind::AllGather, ag_send.data(), ag_recv.data(), kBlock, MPI_COMM_WORLD, collective_tag(0));
  rs.ring().start(RingKind::ReduceScatter, rs_send.data(), rs_recv.data(), kBlock, MPI_COMM_WORLD, collective_tag(1));
  wait_all({&ag, &rs}, "two rings");
  long wrong_ag = 0, wrong_rs = 0;
  for (int b = 0; b < p; ++b)  // its own block is the GPU's local copy, not the ring's (ring_collective.hpp)
    for (int i = 0; i < kBlock && b != g_rank; ++i)
      wrong_ag += ag_recv[static_cast<std::size_t>(b * kBlock + i)] != value(b, b, i);
  const int starter = (g_rank + 1) % p;  // the member whose input block `rank` travels the ring
  for (int i = 0; i < kBlock && p > 1; ++i)
    wrong_rs += rs_recv[static_cast<std::size_t>(g_rank * kBlock + i)] != value(starter, g_rank, i);
  const auto ring_bytes = static_cast<std::uint64_t>(p - 1) * kBlock * sizeof(float);
  report("ring all-gather", wrong_ag, *ag.bytes_sent(), ring_bytes);
  report("ring reduce-scatter", wrong_rs, *rs.bytes_sent(), ring_bytes);
}

void test_tree(std::size_t chunk) {
  const std::size_t n = static_cast<std::size_t>(g_size) * kBlock + 1;  // odd: the two trees' halves differ
  std::vector<float> send = inputs(n), recv(n, -1.0f);
  PendingComm c;
  c.tree().start(send.data(), recv.data(), n, chunk, MPI_COMM_WORLD, collective_tag(2));
  wait_all({&c}, "the tree all-reduce");
  report("tree all-reduce, chunks of " + std::to_string(chunk) + " floats", check_all_reduce(recv), *c.bytes_sent(),
         tree_bytes(n));
}

/// Members on nodes of `per_node`, in rank order (`interleaved` false) or round-robin over the nodes.
void test_hierarchical(int per_node, bool interleaved) {
  const int p = g_size, nodes = p / per_node;
  const int node = interleaved ? g_rank % nodes : g_rank / per_node;
  const int local = interleaved ? g_rank / nodes : g_rank % per_node;
  auto member = [&](int a, int j) { return interleaved ? j * nodes + a : a * per_node + j; };
  HierarchicalComms comms(MPI_COMM_WORLD, node, local, g_rank);
  const std::string where = " L=" + std::to_string(per_node) + (interleaved ? " interleaved" : " in order");
  const std::size_t n = static_cast<std::size_t>(p) * kBlock, region = n / static_cast<std::size_t>(per_node);
  const auto ring = [](int q, std::size_t bytes) { return static_cast<std::uint64_t>(q - 1) * bytes / q; };
  const std::uint64_t intra = ring(per_node, n * sizeof(float)), inter = ring(nodes, region * sizeof(float));

  std::vector<float> send = inputs(n), recv(n, -1.0f);
  PendingComm ar;
  ar.hierarchical().start(HierarchicalKind::AllReduce, send.data(), recv.data(), n, comms, collective_tag(3));
  wait_all({&ar}, "the hierarchical all-reduce");
  report("hierarchical all-reduce" + where, check_all_reduce(recv), *ar.bytes_sent(), 2 * intra + 2 * inter);

  // All-gather: region j, block a must hold the block of member (node a, local j).
  std::vector<float> mine(kBlock), gathered(n, -1.0f);
  for (int i = 0; i < kBlock; ++i) mine[static_cast<std::size_t>(i)] = value(g_rank, 0, i);
  PendingComm ag;
  ag.hierarchical().start(HierarchicalKind::AllGather, mine.data(), gathered.data(), n, comms, collective_tag(4));
  wait_all({&ag}, "the hierarchical all-gather");
  long wrong = 0;
  for (int j = 0; j < per_node; ++j)
    for (int a = 0; a < nodes; ++a)
      for (int i = 0; i < kBlock && member(a, j) != g_rank; ++i)
        wrong += gathered[static_cast<std::size_t>((j * nodes + a) * kBlock + i)] != value(member(a, j), 0, i);
  report("hierarchical all-gather" + where, wrong, *ag.bytes_sent(), intra + inter);

  // Reduce-scatter: this member's block (region `local`, block `node`) is the input there of the member
  // that starts both rings: local index local+1 on node node+1.
  std::vector<float> scattered(n, -1.0f);
  PendingComm rs;
  rs.hierarchical().start(HierarchicalKind::ReduceScatter, send.data(), scattered.data(), n, comms, collective_tag(5));
  wait_all({&rs}, "the hierarchical reduce-scatter");
  const int starter = member((node + 1) % nodes, (local + 1) % per_node), block = local * nodes + node;
  wrong = 0;
  for (int i = 0; i < kBlock; ++i)
    wrong += scattered[static_cast<std::size_t>(block * kBlock + i)] != value(starter, block, i);
  report("hierarchical reduce-scatter" + where, wrong, *rs.bytes_sent(), intra + inter);
}

void test_direct() {
  const int p = g_size;
  const std::size_t n = static_cast<std::size_t>(p) * kBlock;
  const auto phase_bytes = static_cast<std::uint64_t>(p - 1) * kBlock * sizeof(float);
  CollectiveArgs args;
  args.n = n;
  args.comm = MPI_COMM_WORLD;

  std::vector<float> mine(kBlock), gathered(n, -1.0f);
  for (int i = 0; i < kBlock; ++i) mine[static_cast<std::size_t>(i)] = value(g_rank, g_rank, i);
  PendingComm ag;
  args.kind = CollKind::AllGather;
  args.send = mine.data();
  args.recv = gathered.data();
  args.tag = collective_tag(9);
  ag.start(exasim::collectives::Algorithm::Direct, args);
  wait_all({&ag}, "the direct all-gather");
  long wrong = 0;
  for (int b = 0; b < p; ++b)
    for (int i = 0; i < kBlock && b != g_rank; ++i)
      wrong += gathered[static_cast<std::size_t>(b * kBlock + i)] != value(b, b, i);
  report("direct all-gather", wrong, *ag.bytes_sent(), phase_bytes);

  std::vector<float> send = inputs(n), scattered(n, -1.0f);
  PendingComm rs;
  args.kind = CollKind::ReduceScatter;
  args.send = send.data();
  args.recv = scattered.data();
  args.tag = collective_tag(10);
  rs.start(exasim::collectives::Algorithm::Direct, args);
  wait_all({&rs}, "the direct reduce-scatter");
  wrong = 0;
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < kBlock && j != g_rank; ++i)
      wrong += scattered[static_cast<std::size_t>(j * kBlock + i)] != value(j, g_rank, i);
  report("direct reduce-scatter", wrong, *rs.bytes_sent(), phase_bytes);

  std::vector<float> reduced(n, -1.0f);
  PendingComm ar;
  args.kind = CollKind::AllReduce;
  args.recv = reduced.data();
  args.tag = collective_tag(11);
  ar.start(exasim::collectives::Algorithm::Direct, args);
  wait_all({&ar}, "the direct all-reduce");
  report("direct all-reduce", check_all_reduce(reduced), *ar.bytes_sent(), 2 * phase_bytes);
}

/// One collective of every algorithm in flight at once (and libnbc's all-reduce), each tested in a
/// rank-dependent order: none may wait on another.
void test_interleaved() {
  const int p = g_size;
  const int per_node = p % 2 == 0 && p > 2 ? 2 : 0;  // a hierarchical member where the size allows
  const std::size_t n = static_cast<std::size_t>(p) * kBlock;
  std::vector<float> a = inputs(n), b = inputs(n), c = inputs(n), d = inputs(n), e = inputs(n);
  std::vector<float> ra(n), rb(n), rc(n), rd(n), re(n);
  PendingComm tree, ring, library, hierarchical, direct;
  HierarchicalComms comms;
  if (per_node > 0) comms = HierarchicalComms(MPI_COMM_WORLD, g_rank / per_node, g_rank % per_node, g_rank);
  tree.tree().start(a.data(), ra.data(), n, 2000, MPI_COMM_WORLD, collective_tag(6));
  ring.ring().start(RingKind::ReduceScatter, b.data(), rb.data(), kBlock, MPI_COMM_WORLD, collective_tag(7));
  MPI_Iallreduce(c.data(), rc.data(), static_cast<int>(n), MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD, library.request());
  CollectiveArgs direct_args;
  direct_args.send = e.data();
  direct_args.recv = re.data();
  direct_args.n = n;
  direct_args.comm = MPI_COMM_WORLD;
  direct_args.tag = collective_tag(12);
  direct.start(exasim::collectives::Algorithm::Direct, direct_args);  // an all-reduce
  std::vector<PendingComm*> all = {&tree, &ring, &library, &direct};
  if (per_node > 0) {
    hierarchical.hierarchical().start(HierarchicalKind::AllReduce, d.data(), rd.data(), n, comms, collective_tag(8));
    all.push_back(&hierarchical);
  }
  wait_all(all, "collectives of every algorithm at once");
  report("at once: tree all-reduce", check_all_reduce(ra), *tree.bytes_sent(), tree_bytes(n));
  report("at once: ring reduce-scatter", 0, *ring.bytes_sent(), static_cast<std::uint64_t>(p - 1) * kBlock * 4);
  report("at once: direct all-reduce", check_all_reduce(re), *direct.bytes_sent(),
         2 * static_cast<std::uint64_t>(p - 1) * kBlock * 4);
  if (per_node > 0) {
    const std::uint64_t intra = (per_node - 1) * n * sizeof(float) / per_node;
    const std::uint64_t inter = (p / per_node - 1) * (n / per_node) * sizeof(float) / (p / per_node);
    report("at once: hierarchical all-reduce", check_all_reduce(rd), *hierarchical.bytes_sent(), 2 * intra + 2 * inter);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  test_rings();
  for (std::size_t chunk : {std::size_t{1500}, std::size_t{1} << 20}) test_tree(chunk);  // many chunks; one
  for (int per_node = 2; per_node < g_size; ++per_node) {
    if (g_size % per_node != 0) continue;
    test_hierarchical(per_node, false);
    test_hierarchical(per_node, true);
  }
  test_direct();
  test_interleaved();
  if (g_rank == 0) std::printf("collectives on %d ranks: %d failed checks\n", g_size, g_failed);
  MPI_Finalize();
  return g_failed == 0 ? 0 : 1;
}
