#include "sim/core/child_process.hpp"

#include "sim/core/error.hpp"

#include <cerrno>
#include <cstring>
#include <new>
#include <nlohmann/json.hpp>

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <thread>

namespace exasim {

namespace {

// The child's message: one byte saying how the work ended, then the result (Ok) or the error as JSON.
enum class Outcome : char { Ok = 'R', Input = 'I', Environment = 'V', InvalidArgument = 'A', Logic = 'L', Other = 'E' };

std::string message_of(const std::function<std::string()>& work) {
  try {
    return static_cast<char>(Outcome::Ok) + work();
  } catch (const InputError& e) {
    return static_cast<char>(Outcome::Input) +
           nlohmann::json{{"source", e.source()}, {"field", e.field()}, {"message", e.what()}}.dump(
               -1, ' ', false, nlohmann::json::error_handler_t::replace);  // a file name may not be UTF-8
  } catch (const EnvironmentError& e) {
    return static_cast<char>(Outcome::Environment) + std::string(e.what());
  } catch (const std::bad_alloc&) {
    return static_cast<char>(Outcome::Environment) + std::string("out of memory in a worker process");
  } catch (const std::invalid_argument& e) {
    return static_cast<char>(Outcome::InvalidArgument) + std::string(e.what());
  } catch (const std::logic_error& e) {
    return static_cast<char>(Outcome::Logic) + std::string(e.what());
  } catch (const std::exception& e) {
    return static_cast<char>(Outcome::Other) + std::string(e.what());
  } catch (...) {
    return static_cast<char>(Outcome::Other) + std::string("an exception that is not a std::exception");
  }
}

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

/// The InputError the child threw: the same source, field and message (InputError's message starts
/// with "source: field: ", which its constructor puts back).
[[noreturn]] void throw_input_error(const std::string& text) {
  const auto e = nlohmann::json::parse(text);
  const std::string source = e.at("source"), field = e.at("field"), message = e.at("message");
  const std::string prefix = source + (field.empty() ? "" : ": " + field) + ": ";
  throw InputError(source, field, message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message);
}

}  // namespace

unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

ChildProcess::ChildProcess(const std::function<std::string()>& work) {
  // The child inherits unflushed stdio buffers; flushed there too, they would print twice.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  int fds[2];
  if (::pipe(fds) != 0)
    throw EnvironmentError(std::string("cannot create a pipe for a child process: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw EnvironmentError(std::string("cannot start a worker process: ") + std::strerror(e) +
                           " (a process limit such as ulimit -u? --jobs 1 runs without one)");
  }
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      code = write_all(fds[1], message_of(work)) ? 0 : 3;
    } catch (...) {  // std::bad_alloc building the message
      code = 4;
    }
    std::_Exit(code);
  }
  ::close(fds[1]);
  pid_ = pid;
  read_fd_ = fds[0];
}

ChildProcess::~ChildProcess() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  }
}

void ChildProcess::read_available(bool block) {
  char buffer[1 << 16];
  while (!eof_) {
    if (!block) {
      pollfd p{read_fd_, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) return;  // nothing to read yet (or interrupted: ask again later)
    }
    const ssize_t n = ::read(read_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      return;
    }
    received_.append(buffer, static_cast<std::size_t>(n));
  }
}

bool ChildProcess::ready() {
  if (pid_ <= 0) return true;
  read_available(/*block=*/false);
  return eof_;
}

std::string ChildProcess::get() {
  if (pid_ <= 0) throw std::logic_error("ChildProcess::get: called twice");
  // Read everything before waiting: a large result would otherwise block the child on a full pipe.
  read_available(/*block=*/true);
  ::close(read_fd_);
  read_fd_ = -1;
  int status = 0;
  rusage usage{};
  while (::wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {}
  pid_ = -1;
  peak_rss_bytes_ = static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
  if (WIFSIGNALED(status))
    throw std::runtime_error("a child process died of signal " + std::to_string(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || received_.empty())
    throw std::runtime_error("a child process failed (exit code " + std::to_string(WEXITSTATUS(status)) + ")");
  const auto outcome = static_cast<Outcome>(received_[0]);
  std::string body = received_.substr(1);
  received_.clear();
  switch (outcome) {
    case Outcome::Ok: return body;
    case Outcome::Input: throw_input_error(body);
    case Outcome::Environment: throw EnvironmentError(body);
    case Outcome::InvalidArgument: throw std::invalid_argument(body);
    case Outcome::Logic: throw std::logic_error(body);
    case Outcome::Other: break;
  }
  throw std::runtime_error(body);
}

}  // namespace exasim
