#pragma once
// One piece of work in a child process while the caller goes on with another: the two runs of a
// sampled simulation (layer_sampling.hpp) share nothing but the scenario, and on a machine with two
// cores the shorter one then costs no wall time. A forked process, not a thread: the runtimes were
// written single-threaded (SimGrid keeps one engine per process), and a child shares no state.
//
// The child's result crosses back as CBOR (doubles bit for bit, so the answer is the one the caller
// would have computed itself); an InputError thrown there is thrown again by get(), as the same
// source, field and message, so the user sees the error they would see without the child.
//
// LIMITATIONS:
//  - POSIX only (fork, pipe); the work must not touch the caller's open output (the child's buffered
//    stdout is never flushed: it leaves through _Exit);
//  - callbacks the work calls run in the child: what they record there is lost to the caller.

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <functional>

namespace exasim::api {

/// How many CPUs this process may run on (its affinity mask), at least 1.
[[nodiscard]] unsigned available_cpus();

class ForkedCall {
 public:
  /// Starts `work` in a forked child. Throws std::runtime_error if the child cannot be started.
  explicit ForkedCall(const std::function<nlohmann::json()>& work);
  ForkedCall(const ForkedCall&) = delete;
  ForkedCall& operator=(const ForkedCall&) = delete;
  /// Stops a child whose result was never asked for.
  ~ForkedCall();

  /// Waits for the child and returns what `work` returned; throws InputError or std::runtime_error as
  /// `work` did (std::runtime_error, naming the signal or exit code, if the child died). Once only.
  [[nodiscard]] nlohmann::json get();

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
};

}  // namespace exasim::api
