#include "sim/simgrid/internal/child_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace exasim::sg {

namespace {

// First byte of the child's message.
enum class Outcome : std::uint8_t { Ok, InvalidArgument, LogicError, OtherError };

bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

[[noreturn]] void child_main(int fd, const std::function<std::vector<char>()>& work) {
  ByteWriter message;
  try {
    std::vector<char> payload = work();
    message.put(Outcome::Ok);
    message.bytes().insert(message.bytes().end(), payload.begin(), payload.end());
  } catch (const std::invalid_argument& e) {
    message.put(Outcome::InvalidArgument);
    message.put_string(e.what());
  } catch (const std::logic_error& e) {
    message.put(Outcome::LogicError);
    message.put_string(e.what());
  } catch (const std::exception& e) {
    message.put(Outcome::OtherError);
    message.put_string(e.what());
  }
  const bool sent = write_all(fd, message.bytes().data(), message.bytes().size());
  ::close(fd);
  ::_exit(sent ? 0 : 3);
}

}  // namespace

void ByteReader::take(void* out, std::size_t n) {
  if (at_ + n > bytes_.size()) throw std::runtime_error("SimGrid child: truncated result");
  if (n > 0) std::memcpy(out, bytes_.data() + at_, n);
  at_ += n;
}

std::vector<char> run_in_child(const std::function<std::vector<char>()>& work) {
  // The child inherits unflushed stdio buffers; SimGrid flushes them there, which would print twice.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);
  // Read everything before waiting: a large result would otherwise block the child on a full pipe.
  std::vector<char> message;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    message.insert(message.end(), buffer, buffer + n);
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(status))
    throw std::runtime_error("SimGrid child process died with signal " + std::to_string(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || message.empty())
    throw std::runtime_error("SimGrid child process failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")");

  ByteReader reader(message);
  const auto outcome = reader.get<Outcome>();
  if (outcome == Outcome::Ok) return {message.begin() + sizeof(Outcome), message.end()};
  const std::string what = reader.get_string();
  if (outcome == Outcome::InvalidArgument) throw std::invalid_argument(what);
  if (outcome == Outcome::LogicError) throw std::logic_error(what);
  throw std::runtime_error(what);
}

}  // namespace exasim::sg
