#include "traces/trace.hpp"
#include "sim/core/error.hpp"

#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

using namespace exasim;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("exasim_trace_test_" + name)).string();
}
}  // namespace

TEST_CASE("trace CSV round-trips through fast-cpp-csv-parser", "[unit]") {
  std::vector<trace::TraceRow> rows = {{0, "L0.qkv.fwd.gemm", "gemm", "", 1e6, 2.5e12, 0.0, 1.25e-3},
                                       {3, "L0.qkv.fwd.all_reduce", "all_reduce", "x", 6.7e7, 0, 1.25e-3, 2e-3}};
  auto path = temp_path("roundtrip.csv");
  trace::write_csv(path, rows);
  auto back = trace::read_csv(path);
  REQUIRE(back.size() == 2);
  CHECK(back[1].rank == 3);
  CHECK(back[1].op == "L0.qkv.fwd.all_reduce");
  CHECK(back[1].dim == "x");
  CHECK(back[0].dim.empty());
  CHECK(back[0].flops == 2.5e12);
  CHECK(back[1].t_end_s == 2e-3);
}

TEST_CASE("malformed trace CSVs are input errors naming the file", "[unit]") {
  auto path = temp_path("bad.csv");
  { std::ofstream(path) << "rank,op,kind\n0,a,gemm\n"; }
  CHECK_THROWS_AS(trace::read_csv(path), InputError);
  { std::ofstream(path) << "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s\nzero,a,gemm,,1,1,0,1\n"; }
  CHECK_THROWS_AS(trace::read_csv(path), InputError);
  { std::ofstream(path) << "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s\n0,a,gemm,,1,1,2,1\n"; }
  CHECK_THROWS_WITH(trace::read_csv(path), Catch::Contains("t_end_s is before t_start_s"));
  CHECK_THROWS_AS(trace::read_csv(temp_path("missing.csv")), InputError);
}

TEST_CASE("trace CSV values out of range are refused naming the line and field", "[unit]") {
  auto path = temp_path("range.csv");
  const std::string header = "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s\n";
  { std::ofstream(path) << header << "0,a,gemm,,1,1,0,1\n0,b,all_reduce,x,-8,0,1,2\n"; }
  CHECK_THROWS_WITH(trace::read_csv(path), path + ": line 3: bytes: must be a byte count in [0, 1e18]");
  { std::ofstream(path) << header << "0,a,gemm,,1,1,0,1e308\n"; }
  CHECK_THROWS_WITH(trace::read_csv(path), path + ": line 2: t_end_s: must be a time in [0, 1e7] seconds");
  { std::ofstream(path) << header << "0,a,gemm,,1,1,-1,1\n"; }
  CHECK_THROWS_WITH(trace::read_csv(path), Catch::Contains("line 2: t_start_s: must be a time"));
}

TEST_CASE("a trace CSV that is a FIFO or longer than the row limit is refused", "[unit]") {
  const auto fifo = temp_path("fifo.csv");
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(trace::read_csv(fifo), Catch::Contains("is a FIFO (named pipe), not a regular file"));
  std::filesystem::remove(fifo);
  const auto path = temp_path("rows.csv");
  { std::ofstream(path) << "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s\n0,a,gemm,,1,1,0,1\n0,b,gemm,,1,1,1,2\n"; }
  ::setenv("EXASIM_MAX_EVENTS", "1", 1);
  CHECK_THROWS_WITH(trace::read_csv(path),
                    Catch::Contains("more than 1 events") && Catch::Contains("EXASIM_MAX_EVENTS"));
  ::unsetenv("EXASIM_MAX_EVENTS");
}

TEST_CASE("Chrome trace: events of one track never partially overlap", "[unit]") {
  // Rank 0 computes, posts three all-gathers that overlap each other and the compute, then waits.
  const std::vector<trace::TraceRow> rows = {
      {0, "a.gemm", "gemm", "", 0, 1, 0.0, 1.0},     {0, "ag1", "all_gather", "x", 8, 0, 0.1, 0.6},
      {0, "ag2", "all_gather", "x", 8, 0, 0.2, 0.9}, {0, "ag3", "all_gather", "y", 8, 0, 0.7, 1.4},
      {0, "ag3.wait", "wait", "y", 8, 0, 1.0, 1.4},  {0, "b.gemm", "gemm", "", 0, 1, 1.4, 2.0},
      {1, "a.gemm", "gemm", "", 0, 1, 0.0, 1.0},     {1, "ag1", "all_gather", "x", 8, 0, 0.5, 0.6},
  };
  const auto path = (std::filesystem::temp_directory_path() / "exasim_trace_lanes.json").string();
  trace::write_chrome_json(path, rows, 4);
  std::ifstream in(path);
  const auto doc = nlohmann::json::parse(in);
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  std::map<std::pair<int, int>, std::string> names;
  std::size_t complete = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::pair<int, int> track{e["pid"].get<int>(), e["tid"].get<int>()};
    if (e["ph"] == "M" && e["name"] == "thread_name") names[track] = e["args"]["name"].get<std::string>();
    if (e["ph"] != "X") continue;
    ++complete;
    tracks[track].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  }
  CHECK(complete == rows.size());
  for (auto& [track, events] : tracks) {
    INFO("track " << names[track]);
    std::sort(events.begin(), events.end());
    for (std::size_t i = 1; i < events.size(); ++i) CHECK(events[i].first >= events[i - 1].second);
  }
  // Rank 0: its timeline and two collective tracks (ag1 and ag3 share one, ag2 needs another); rank 1: two.
  CHECK(tracks.size() == 5);
  CHECK(names.size() == 5);
  CHECK(names[{0, 0}] == "rank 0");
  CHECK(names[{0, 1}] == "rank 0 collectives 1");
  CHECK(names[{0, 2}] == "rank 0 collectives 2");
}
