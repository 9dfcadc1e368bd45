// Trace gathering without MPI: records of several ranks, in the order a gather delivers them, become
// one sorted trace; files appear complete or not at all.
#include "emu/trace_records.hpp"

#include "sim/schedule/axonn4d.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>

using namespace exasim;

namespace {
schedule::Plan small_plan() {
  schedule::ModelSpec m{"tiny", 1, 256, 4, 128, 1024};
  return schedule::build_axonn4d_plan(m, {2, 1, 1, 2}, {4, schedule::Recompute::Full}, {});
}
std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / "exasim_emu_trace_test";
  std::filesystem::create_directories(dir);
  return dir;
}
}  // namespace

TEST_CASE("gathered records of all ranks become one trace sorted by rank and time", "[unit]") {
  auto plan = small_plan();
  const auto& ops = plan.stream_of(0).ops;
  REQUIRE(ops.size() > 3);
  // Rank 1's block arrives first, and each rank's records are out of time order (a CollStart is
  // recorded at its Wait): rows_of must not depend on either.
  std::vector<emu::OpRecord> gathered = {{1, 1, 0.2, 0.3}, {1, 0, 0.0, 0.1}, {0, 2, 0.5, 0.6}, {0, 0, 0.0, 0.4}};
  auto rows = emu::rows_of(plan, gathered);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].rank == 0);
  CHECK(rows[0].t_start_s == 0.0);
  CHECK(rows[0].op == plan.names[ops[0].name]);
  CHECK(rows[1].t_start_s == 0.5);
  CHECK(rows[2].rank == 1);
  CHECK(rows[3].t_end_s == 0.3);
}

TEST_CASE("a published trace is complete or absent, never partial", "[unit]") {
  auto plan = small_plan();
  auto dir = temp_dir();
  auto path = (dir / "trace.csv").string();
  std::filesystem::remove(path);
  emu::publish_trace_csv(path, emu::rows_of(plan, {{0, 0, 0.0, 1.0}}));
  auto back = trace::read_csv(path);
  REQUIRE(back.size() == 1);
  CHECK(back[0].t_end_s == 1.0);

  auto other = (dir / "summary.json").string();
  std::filesystem::remove(other);
  CHECK_THROWS_AS(emu::publish_file(other,
                                    [](std::ostream& out) {
                                      out << "{\"half\":";
                                      throw std::runtime_error("rank 3 died");
                                    }),
                  std::runtime_error);
  CHECK_FALSE(std::filesystem::exists(other));
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    CHECK(entry.path().filename().string().find(".partial.") == std::string::npos);
}
