#pragma once
// A flat byte encoding of a simulation's result, so that it crosses from the child process a SimGrid run
// happens in (sim/core/child_process.hpp) back to the caller: values go in and come out in the same order.
//
// Why bytes and not JSON: a SimGrid result carries per-rank vectors and per-link loads of large jobs, and
// a raw copy of doubles is exact and cheap.
//
// LIMITATIONS: trivially copyable values only, in the writer's byte order (the child is the same binary
// on the same host).

#include <cstdint>
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
    bytes_ += s;
  }
  [[nodiscard]] std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}
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
  const std::string& bytes_;
  std::size_t at_ = 0;
};

}  // namespace exasim::sg
