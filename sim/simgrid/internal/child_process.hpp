#pragma once
// Runs a function in a forked child process and brings its bytes back through a pipe.
//
// Why: SimGrid has one global engine per process that cannot be torn down and built again, while
// tests and benchmarks run many simulations in one process. A fresh child per simulation gives each
// one a pristine SimGrid; fork() copies the parent's topology and plan for free (copy on write).
//
// The child's exceptions come back as exceptions of the same family in the parent (invalid_argument,
// logic_error, other: runtime_error) with the same message.
//
// LIMITATIONS: POSIX only; the parent must be single-threaded when it forks (true of exasim and its
// tests); the child ends with _exit(), so its own atexit handlers and destructors never run.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace exasim::sg {

/// Serialises values into a byte buffer, and reads them back in the same order.
class ByteWriter {
 public:
  template <class T>
  void put(const T& value) {
    const auto* p = reinterpret_cast<const char*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& values) {
    put<std::uint64_t>(values.size());
    const auto* p = reinterpret_cast<const char*>(values.data());
    bytes_.insert(bytes_.end(), p, p + values.size() * sizeof(T));
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  [[nodiscard]] std::vector<char>& bytes() { return bytes_; }

 private:
  std::vector<char> bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<char>& bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    T value;
    take(&value, sizeof(T));
    return value;
  }
  template <class T>
  std::vector<T> get_vector() {
    std::vector<T> values(get<std::uint64_t>());
    take(values.data(), values.size() * sizeof(T));
    return values;
  }
  std::string get_string() {
    auto chars = get_vector<char>();
    return {chars.begin(), chars.end()};
  }

 private:
  void take(void* out, std::size_t n);
  const std::vector<char>& bytes_;
  std::size_t at_ = 0;
};

/// Calls `work` in a forked child and returns the bytes it produced; rethrows its exception.
[[nodiscard]] std::vector<char> run_in_child(const std::function<std::vector<char>()>& work);

}  // namespace exasim::sg
