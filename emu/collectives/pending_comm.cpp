#include "emu/collectives/pending_comm.hpp"

#include <stdexcept>

namespace exasim::emu {

namespace {

using collectives::Algorithm;
using schedule::CollKind;

int group_size(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

/// Ring: libnbc's ring all-reduce (validate/mpirun.cpp asks Open MPI for it), exasim's rings otherwise.
void start_ring(PendingComm& c, const CollectiveArgs& a) {
  if (a.kind == CollKind::AllReduce) {
    MPI_Iallreduce(a.send, a.recv, static_cast<int>(a.n), MPI_FLOAT, a.reduction, a.comm, c.request());
    return;
  }
  const int block = static_cast<int>(a.n / static_cast<std::size_t>(group_size(a.comm)));
  c.ring().start(a.kind == CollKind::AllGather ? RingKind::AllGather : RingKind::ReduceScatter, a.send, a.recv, block,
                 a.comm, a.tag);
}

void start_tree(PendingComm& c, const CollectiveArgs& a) {
  if (a.kind != CollKind::AllReduce) throw std::logic_error("PendingComm: the tree runs all-reduces only");
  c.tree().start(a.send, a.recv, a.n, kTreeChunkBytes / sizeof(float), a.comm, a.tag);
}

void start_hierarchical(PendingComm& c, const CollectiveArgs& a) {
  if (a.node_comms == nullptr || !a.node_comms->valid())
    throw std::logic_error("PendingComm: hierarchical needs the group's node sub-communicators");
  const auto kind = a.kind == CollKind::AllReduce   ? HierarchicalKind::AllReduce
                    : a.kind == CollKind::AllGather ? HierarchicalKind::AllGather
                                                    : HierarchicalKind::ReduceScatter;
  c.hierarchical().start(kind, a.send, a.recv, a.n, *a.node_comms, a.tag);
}

void start_direct(PendingComm& c, const CollectiveArgs& a) {
  c.direct().start(a.kind, a.send, a.recv, a.n, a.comm, a.tag);
}

/// The algorithms the emulation runs, each with its runner: one line per MPI class.
struct Runner {
  Algorithm algorithm;
  void (*start)(PendingComm&, const CollectiveArgs&);
};
constexpr Runner kRunners[] = {
    {Algorithm::Ring, start_ring},
    {Algorithm::Tree, start_tree},
    {Algorithm::Hierarchical, start_hierarchical},
    {Algorithm::Direct, start_direct},
};

const Runner* runner_of(Algorithm algorithm) {
  for (const Runner& r : kRunners)
    if (r.algorithm == algorithm) return &r;
  return nullptr;
}

}  // namespace

int collective_tag(std::uint64_t sequence, int part) {
  return 1 + static_cast<int>(sequence % 8000) * kTagsPerCollective + part;
}

bool PendingComm::can_run(Algorithm algorithm) { return runner_of(algorithm) != nullptr; }

void PendingComm::start(Algorithm algorithm, const CollectiveArgs& args) {
  const Runner* runner = runner_of(algorithm);
  if (runner == nullptr) throw std::logic_error("PendingComm: no MPI class runs this collective algorithm");
  runner->start(*this, args);
}

bool PendingComm::test() {
  switch (active_) {
    case Active::Ring: return ring_.test();
    case Active::Tree: return tree_.test();
    case Active::Hierarchical: return hierarchical_.test();
    case Active::Direct: return direct_.test();
    case Active::Request: break;
  }
  int flag = 0;
  MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
  return flag != 0;
}

std::optional<std::uint64_t> PendingComm::bytes_sent() const {
  switch (active_) {
    case Active::Ring: return ring_.bytes_sent();
    case Active::Tree: return tree_.bytes_sent();
    case Active::Hierarchical: return hierarchical_.bytes_sent();
    case Active::Direct: return direct_.bytes_sent();
    case Active::Request: break;
  }
  return std::nullopt;
}

}  // namespace exasim::emu
