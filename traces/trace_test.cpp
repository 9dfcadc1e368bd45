#include "traces/trace.hpp"
#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

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
