#include "sim/report/csv_table.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

TEST_CASE("csv_line quotes what would split or start a row, and the reader undoes it", "[unit]") {
  using exasim::report::csv_line;
  CHECK(csv_line({"a", "b"}) == "a,b");
  CHECK(csv_line({"x,y", R"(say "hi")", "line\nbreak"}) == R"("x,y","say ""hi""",line break)");
  const auto path =
      std::filesystem::temp_directory_path() / ("exasim_csv_table_test_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(path) << csv_line({"name", "value"}) << '\n' << csv_line({R"({"a":1,"b":"c"})", "2"}) << '\n';
  const auto table = exasim::report::read_csv_table(path.string());
  table.require_width();
  REQUIRE(table.rows.size() == 1);
  CHECK(table.cell(0, "name") == R"({"a":1,"b":"c"})");
  CHECK(table.cell(0, "value") == "2");
  std::filesystem::remove(path);
}
