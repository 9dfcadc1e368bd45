#include "sim/api/forked_call.hpp"

#include "sim/core/error.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace exasim::api {

unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

bool write_all(int fd, const std::vector<std::uint8_t>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::vector<std::uint8_t> read_all(int fd) {
  std::vector<std::uint8_t> bytes;
  std::uint8_t buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return bytes;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
}

/// What the child sends back: {"result": ...}, {"input_error": {source, field, message}} or {"error": message}.
nlohmann::json run_in_child(const std::function<nlohmann::json()>& work) {
  try {
    return {{"result", work()}};
  } catch (const InputError& e) {
    return {{"input_error", {{"source", e.source()}, {"field", e.field()}, {"message", e.what()}}}};
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  } catch (...) {
    return {{"error", "an exception that is not a std::exception"}};
  }
}

/// The InputError the child threw: the same source, field and message (InputError's message starts
/// with "source: field: ", which its constructor puts back).
[[noreturn]] void throw_input_error(const nlohmann::json& e) {
  const std::string source = e.at("source"), field = e.at("field"), message = e.at("message");
  const std::string prefix = source + (field.empty() ? "" : ": " + field) + ": ";
  throw InputError(source, field, message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message);
}

}  // namespace

ForkedCall::ForkedCall(const std::function<nlohmann::json()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for a child process");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("cannot fork a child process");
  }
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      code = write_all(fds[1], nlohmann::json::to_cbor(run_in_child(work))) ? 0 : 3;
    } catch (...) {
      code = 4;
    }
    std::_Exit(code);  // no atexit handlers, no flush of the caller's buffered output
  }
  ::close(fds[1]);
  pid_ = pid;
  read_fd_ = fds[0];
}

ForkedCall::~ForkedCall() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  }
}

nlohmann::json ForkedCall::get() {
  if (pid_ <= 0) throw std::logic_error("ForkedCall::get: called twice");
  const std::vector<std::uint8_t> bytes = read_all(read_fd_);
  ::close(read_fd_);
  read_fd_ = -1;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  pid_ = -1;
  if (WIFSIGNALED(status))
    throw std::runtime_error("a child process died of signal " + std::to_string(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("a child process failed (exit code " + std::to_string(WEXITSTATUS(status)) + ")");
  nlohmann::json answer;
  try {
    answer = nlohmann::json::from_cbor(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a child process sent back an unreadable result: ") + e.what());
  }
  if (answer.contains("input_error")) throw_input_error(answer["input_error"]);
  if (answer.contains("error")) throw std::runtime_error(answer["error"].get<std::string>());
  return std::move(answer["result"]);
}

}  // namespace exasim::api
