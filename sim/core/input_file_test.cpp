#include "sim/core/input_file.hpp"

#include "sim/core/error.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <catch2/catch.hpp>
#include <functional>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {
namespace fs = std::filesystem;

std::string temp(const std::string& name) {
  return (fs::temp_directory_path() / ("exasim_input_file_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string write_file(const std::string& name, const std::string& bytes) {
  const auto path = temp(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string gzip(const std::string& text) {
  uLongf size = compressBound(static_cast<uLong>(text.size())) + 32;
  std::string out(size, '\0');
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string read_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const exasim::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("only regular files are read: a FIFO, a device, a directory are refused", "[unit]") {
  const auto fifo = temp("fifo");
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No writer: opening it for reading would block forever.
  CHECK_THAT(read_error_of([&] { exasim::require_regular_file(fifo, "a trace"); }),
             Catch::Contains(fifo + ": is a FIFO (named pipe), not a regular file"));
  CHECK_THAT(read_error_of([&] { (void)exasim::read_bounded_file(fifo, "a trace", 100); }), Catch::Contains("FIFO"));
  fs::remove(fifo);
  CHECK_THAT(read_error_of([] { (void)exasim::read_bounded_file("/dev/zero", "a trace", 100); }),
             Catch::Contains("/dev/zero: is a device or special file"));
  CHECK_THAT(read_error_of([] { exasim::require_regular_file("/", "a trace"); }), Catch::Contains("is a directory"));
  CHECK_THAT(read_error_of([] { exasim::require_regular_file("/nonexistent/x", "a trace"); }),
             Catch::Contains("no such file"));
}

TEST_CASE("reads are bounded, gzip or plain, and name the limit", "[unit]") {
  const std::string text(10000, ' ');
  const auto plain = write_file("plain.json", text);
  const auto gz = write_file("small.json.gz", gzip(text));
  CHECK(exasim::read_bounded_file(plain, "a trace", 10000) == text);
  CHECK(exasim::read_bounded_file(gz, "a trace", 10000) == text);
  CHECK_THAT(read_error_of([&] { (void)exasim::read_bounded_file(gz, "a trace", 9999); }),
             Catch::Contains("larger than 9999 bytes once decompressed") && Catch::Contains("EXASIM_MAX_INPUT_BYTES"));
  CHECK_THAT(read_error_of([&] { (void)exasim::read_bounded_file(plain, "a trace", 9999); }),
             Catch::Contains("larger than 9999 bytes"));
}

TEST_CASE("gzip: concatenated members read as one, trailing garbage and truncation are refused", "[unit]") {
  const auto two = write_file("two.gz", gzip("ab") + gzip("cd"));
  CHECK(exasim::read_bounded_file(two, "a trace", 100) == "abcd");
  const auto garbage = write_file("garbage.gz", gzip("ab") + "junk");
  CHECK_THAT(read_error_of([&] { (void)exasim::read_bounded_file(garbage, "a trace", 100); }),
             Catch::Contains("trailing garbage"));
  const auto whole = gzip(std::string(5000, 'x'));
  const auto cut = write_file("cut.gz", whole.substr(0, whole.size() - 6));
  CHECK_THAT(read_error_of([&] { (void)exasim::read_bounded_file(cut, "a trace", 100000); }),
             Catch::Contains("unexpected end of file"));
}

TEST_CASE("the limits come from the environment, checked", "[unit]") {
  ::setenv("EXASIM_MAX_EVENTS", "12", 1);
  CHECK(exasim::input_limits().max_events == 12);
  ::setenv("EXASIM_MAX_EVENTS", "-1", 1);
  CHECK_THAT(read_error_of([] { (void)exasim::input_limits(); }),
             Catch::StartsWith("EXASIM_MAX_EVENTS: must be a positive"));
  ::unsetenv("EXASIM_MAX_EVENTS");
  CHECK(exasim::input_limits().max_events == exasim::InputLimits{}.max_events);
  CHECK_THAT(read_error_of([] { exasim::too_many_events("t.json", 5); }),
             Catch::Contains("t.json: more than 5 events") && Catch::Contains("EXASIM_MAX_EVENTS"));
}
