#include "emu/mpi_progress.hpp"

#include <cstdio>
#include <sstream>

namespace exasim::emu {

namespace {
void leave_as_is(void*, void*, int*, MPI_Datatype*) {}
}  // namespace

MPI_Op gpu_side_reduction() {
  static MPI_Op op = [] {
    MPI_Op created;
    MPI_Op_create(&leave_as_is, /*commute=*/1, &created);
    return created;
  }();
  return op;
}

void Poller::abort_job(const std::string& message) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "exasim-emu: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();  // MPI_Abort does not return; keeps [[noreturn]] honest
}

void Poller::check_timeout(double since_s, const std::string& what) const {
  if (MPI_Wtime() - since_s <= timeout_s_) return;
  std::ostringstream msg;
  msg << "no progress for " << timeout_s_ << " s while waiting for " << what
      << " (another rank died, hung or runs a different scenario); aborting the job";
  abort_job(msg.str());
}

void Poller::wait(MPI_Request& request, const std::string& what) const { wait_all(&request, 1, what); }

void Poller::wait(PendingComm& comm, const std::string& what) const {
  const double since = MPI_Wtime();
  while (!comm.test()) {
    check_timeout(since, what);
    gpu_.pause();
  }
}

void Poller::wait_all(MPI_Request* requests, int n, const std::string& what) const {
  const double since = MPI_Wtime();
  for (;;) {
    int done = 0;
    MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    check_timeout(since, what);
    gpu_.pause();
  }
}

void Poller::barrier(MPI_Comm comm, const std::string& what) const {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  wait(request, what);
}

}  // namespace exasim::emu
