#include "fuzz/fuzz_targets.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

std::filesystem::path fuzz_dir() { return std::filesystem::path(EXASIM_TEST_DATA_DIR) / "fuzz"; }

/// The files of fuzz/<kind>/<target>/, sorted (the order of the report).
std::vector<std::filesystem::path> inputs(const std::string& kind, const std::string& target) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(fuzz_dir() / kind / target, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// The crashers a fuzzer found, kept after their fix: each must now end normally or in an InputError
// (run_target lets anything else escape, and the sanitizer build catches what does not throw).
TEST_CASE("every saved fuzzer input ends in an answer or an InputError", "[unit]") {
  std::size_t replayed = 0;
  for (const auto& target : exasim::fuzz::target_names()) {
    const auto seeds = inputs("corpus", target);
    INFO("target " << target);
    CHECK(!seeds.empty());  // every target has a seed corpus
    for (const auto& kind : {"corpus", "crashers"}) {
      for (const auto& file : inputs(kind, target)) {
        INFO("input " << file.string());
        CHECK_NOTHROW(exasim::fuzz::run_target(target, read(file)));
        ++replayed;
      }
    }
  }
  CHECK(replayed >= exasim::fuzz::target_names().size());
}

TEST_CASE("an unknown fuzz target is refused", "[unit]") {
  CHECK_THROWS_WITH(exasim::fuzz::run_target("nope", ""), Catch::Contains("no fuzz target named nope"));
}
