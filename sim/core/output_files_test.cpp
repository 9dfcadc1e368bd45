#include "sim/core/output_files.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace {
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("exasim_output_files_test_" + name);
  fs::remove_all(dir);
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}
}  // namespace

TEST_CASE("output files appear only once every file of the set is written", "[unit]") {
  const auto dir = fresh_dir("commit");
  {
    exasim::OutputFiles out("--out", dir, {"a.txt", "b.txt"});
    out.stage_text("a.txt", "alpha\n");
    CHECK(!fs::exists(dir / "a.txt"));  // staged under a temporary name
    out.stage_text("b.txt", "beta\n");
    CHECK(out.commit() == std::vector<std::string>{"a.txt", "b.txt"});
  }
  CHECK(read(dir / "a.txt") == "alpha\n");
  CHECK(read(dir / "b.txt") == "beta\n");
  CHECK(entries(dir) == 2);  // no temporary left
}

TEST_CASE("a failure before the commit leaves no file that looks complete", "[unit]") {
  const auto dir = fresh_dir("failure");
  {
    exasim::OutputFiles out("--out", dir, {"a.txt", "b.txt"});
    out.stage_text("a.txt", "alpha\n");
    CHECK_THROWS_WITH(out.stage("b.txt",
                                [](const std::string& path) {
                                  std::ofstream(path) << "half";
                                  throw std::runtime_error("disk full");
                                }),
                      Catch::Contains("--out: " + (dir / "b.txt").string() + ": cannot write: disk full"));
  }
  CHECK(!fs::exists(dir));  // made for the set, removed with it
  fs::create_directories(dir);
  { exasim::OutputFiles out("--out", dir, {"a.txt"}); }
  CHECK(fs::exists(dir));  // not made for the set: kept
  CHECK(entries(dir) == 0);
}

TEST_CASE("two sets into one directory at once: the second is refused", "[unit]") {
  const auto dir = fresh_dir("lock");
  exasim::OutputFiles first("--out", dir, {"a.txt"});
  CHECK_THROWS_WITH(exasim::OutputFiles("--out", dir, {"a.txt"}),
                    Catch::Contains("another exasim run is writing into this directory"));
  first.stage_text("a.txt", "one\n");
  first.commit();
  CHECK(read(dir / "a.txt") == "one\n");
}

TEST_CASE("only regular files are replaced: a link or a device is refused up front", "[unit]") {
  const auto dir = fresh_dir("targets");
  fs::create_directories(dir);
  fs::create_symlink("/dev/stdout", dir / "out.txt");
  CHECK_THROWS_WITH(exasim::OutputFiles("--out", dir, {"out.txt"}),
                    Catch::Contains("out.txt: is a symbolic link, not a regular file"));
  CHECK_THROWS_WITH(exasim::write_output_file("--out", "/dev/null", "x"),
                    Catch::Contains("/dev/null: is a device or special file, not a regular file"));
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("a write that fails (a full disk, a file size limit) is an error, not a short file", "[unit]") {
  const auto dir = fresh_dir("efbig");
  std::signal(SIGXFSZ, SIG_IGN);  // as exasim does at startup: EFBIG instead of death
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 4096;
  ::setrlimit(RLIMIT_FSIZE, &small);
  std::string what;
  try {
    exasim::write_output_file("--out", dir / "big.txt", std::string(1 << 20, 'x'));
  } catch (const exasim::InputError& e) {
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  CHECK_THAT(what, Catch::Contains("big.txt: cannot write: error while writing") && Catch::Contains("File too large"));
  CHECK(!fs::exists(dir / "big.txt"));
}

TEST_CASE("an output directory that cannot hold the files is refused up front", "[unit]") {
  CHECK_THROWS_WITH(exasim::OutputFiles("--out", "", {"a.txt"}),
                    Catch::Contains("--out: needs a directory name (got an empty string)"));
  const auto dir = fresh_dir("taken");
  fs::create_directories(dir / "b.txt");
  CHECK_THROWS_WITH(exasim::OutputFiles("--out", dir, {"a.txt", "b.txt"}),
                    Catch::Contains((dir / "b.txt").string() + ": is a directory; cannot write the file b.txt there"));
  const auto file = dir / "a.txt";
  std::ofstream(file) << "x";
  CHECK_THROWS_WITH(exasim::OutputFiles("--out", file / "sub", {"a.txt"}),
                    Catch::Contains("--out: " + (file / "sub").string() + ": cannot create directory"));
}
