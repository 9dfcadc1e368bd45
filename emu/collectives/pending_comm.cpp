#include "emu/collectives/pending_comm.hpp"

namespace exasim::emu {

int collective_tag(std::uint64_t sequence, int part) {
  return 1 + static_cast<int>(sequence % 8000) * kTagsPerCollective + part;
}

bool PendingComm::test() {
  switch (active_) {
    case Active::Ring: return ring_.test();
    case Active::Tree: return tree_.test();
    case Active::Hierarchical: return hierarchical_.test();
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
    case Active::Request: break;
  }
  return std::nullopt;
}

}  // namespace exasim::emu
