#pragma once
// Work in a forked child process, its bytes back through a pipe: the one way exasim runs work apart
// from the caller. Why a process and not a thread: the runtimes are single-threaded by design, SimGrid
// keeps one engine per process that cannot be built twice, and a child shares no state and frees all
// its memory when it ends. fork() copies the caller's topology and plan for free (copy on write).
//
// Its users: layer sampling runs its shorter sample beside the longer one (sim/api/simulate.cpp); the
// SimGrid runtime gives each simulation a pristine engine (sim/simgrid); `tune` and `sweep` split a
// batch over local workers (sim/cli/batch.cpp); bench/scale measures each case's peak memory.
//
// The child's exception is thrown again by get() as the same family with the same message: InputError
// (the same source and field, so the user sees the error they would see without the child),
// std::invalid_argument, std::logic_error, anything else as std::runtime_error. A child that dies (a
// signal, a non-zero exit) is a std::runtime_error naming the signal or exit code.
//
// LIMITATIONS:
//  - POSIX only (fork, pipe, poll, wait4); the caller must be single-threaded when it forks (exasim and
//    its tests are);
//  - the child ends with _Exit: its atexit handlers and destructors do not run, and output it buffered
//    is lost (the caller's stdio buffers are flushed before the fork so that nothing prints twice);
//  - callbacks the work calls run in the child: what they record there stays there.

#include <sys/types.h>
#include <cstdint>
#include <functional>
#include <string>

namespace exasim {

/// How many CPUs this process may run on (its affinity mask), at least 1: whether work run apart
/// costs no wall time.
[[nodiscard]] unsigned available_cpus();

class ChildProcess {
 public:
  /// Starts `work` in a forked child. Throws std::runtime_error if no child can be started.
  explicit ChildProcess(const std::function<std::string()>& work);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// Kills and reaps a child whose result was never asked for.
  ~ChildProcess();

  /// True once the child has closed its end of the pipe (it finished or died), so get() returns at
  /// once; reads what the child has sent so far, so a large result cannot block it. Never blocks.
  [[nodiscard]] bool ready();

  /// Waits for the child and returns what `work` returned; throws as `work` did (see above). Once only:
  /// a second call is a std::logic_error.
  [[nodiscard]] std::string get();

  /// The child's peak resident memory in bytes, known after get() (0 before).
  [[nodiscard]] std::int64_t peak_rss_bytes() const { return peak_rss_bytes_; }

 private:
  void read_available(bool block);
  pid_t pid_ = -1;
  int read_fd_ = -1;
  bool eof_ = false;
  std::string received_;
  std::int64_t peak_rss_bytes_ = 0;
};

}  // namespace exasim
