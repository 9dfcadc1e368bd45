#include "emu/collectives/hierarchical_collective.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace exasim::emu {

HierarchicalComms::HierarchicalComms(MPI_Comm group, int node, int local_index, int coordinate) {
  MPI_Comm_split(group, node, coordinate, &intra_);
  // Across nodes in node order, as the simulator's router orders its inter-node rings (group_layout).
  MPI_Comm_split(group, local_index, node, &inter_);
}

HierarchicalComms::~HierarchicalComms() { release(); }

HierarchicalComms::HierarchicalComms(HierarchicalComms&& other) noexcept
    : intra_(std::exchange(other.intra_, MPI_COMM_NULL)), inter_(std::exchange(other.inter_, MPI_COMM_NULL)) {}

HierarchicalComms& HierarchicalComms::operator=(HierarchicalComms&& other) noexcept {
  if (this != &other) {
    release();
    intra_ = std::exchange(other.intra_, MPI_COMM_NULL);
    inter_ = std::exchange(other.inter_, MPI_COMM_NULL);
  }
  return *this;
}

void HierarchicalComms::release() {
  if (intra_ != MPI_COMM_NULL) MPI_Comm_free(&intra_);
  if (inter_ != MPI_COMM_NULL) MPI_Comm_free(&inter_);
}

void HierarchicalCollective::start(HierarchicalKind kind, const float* send, float* recv, std::size_t n,
                                   const HierarchicalComms& comms, int tag) {
  int local = 0, per_node = 1, node = 0, nodes = 1;
  MPI_Comm_rank(comms.intra(), &local);
  MPI_Comm_size(comms.intra(), &per_node);
  MPI_Comm_rank(comms.inter(), &node);
  MPI_Comm_size(comms.inter(), &nodes);
  const std::size_t members = static_cast<std::size_t>(per_node) * static_cast<std::size_t>(nodes);
  if (n % members != 0) throw std::logic_error("HierarchicalCollective: buffer not divisible by the group size");
  const int region = static_cast<int>(n / static_cast<std::size_t>(per_node));  // S/L: one local index's share
  const int block = static_cast<int>(n / members);                              // S/(L N): one member's
  float* mine = recv + static_cast<std::ptrdiff_t>(local) * region;             // this local index's region
  const MPI_Comm intra = comms.intra(), inter = comms.inter();
  // The inter-node phases work inside `mine`, in place: a ring step never sends and receives one block.
  switch (kind) {
    case HierarchicalKind::AllReduce:
      phases_[0] = {RingKind::ReduceScatter, send, recv, region, intra};
      phases_[1] = {RingKind::ReduceScatter, mine, mine, block, inter};
      phases_[2] = {RingKind::AllGather, mine + static_cast<std::ptrdiff_t>(node) * block, mine, block, inter};
      phases_[3] = {RingKind::AllGather, mine, recv, region, intra};
      count_ = 4;
      break;
    case HierarchicalKind::AllGather:
      // The intra-node phase forwards this member's whole region, its own block included: that block
      // is copied into place, the one host copy of these collectives (S/(L N), 1/(p-1) of what the
      // member sends; a GPU makes it at HBM speed). A flat ring sends the block from `send` instead.
      std::copy_n(send, block, mine + static_cast<std::ptrdiff_t>(node) * block);
      phases_[0] = {RingKind::AllGather, send, mine, block, inter};
      phases_[1] = {RingKind::AllGather, mine, recv, region, intra};
      count_ = 2;
      break;
    case HierarchicalKind::ReduceScatter:
      phases_[0] = {RingKind::ReduceScatter, send, recv, region, intra};
      phases_[1] = {RingKind::ReduceScatter, mine, mine, block, inter};
      count_ = 2;
      break;
  }
  tag_ = tag;
  current_ = 0;
  bytes_done_ = 0;
  ring_ = RingCollective{};
  start_phase();
}

void HierarchicalCollective::start_phase() {
  const Phase& p = phases_[current_];
  // Each phase has its own tag: a fast member's next phase on the same communicator cannot be taken
  // for the previous one by a slower peer.
  ring_.start(p.kind, p.send, p.recv, p.block, p.comm, tag_ + current_);
}

bool HierarchicalCollective::test() {
  while (current_ < count_) {
    if (!ring_.test()) return false;
    bytes_done_ += ring_.bytes_sent();
    ring_ = RingCollective{};
    if (++current_ < count_) start_phase();
  }
  return true;
}

}  // namespace exasim::emu
