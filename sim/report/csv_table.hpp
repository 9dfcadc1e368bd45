#pragma once
// The CSV files exasim writes and reads back (tune.csv, links.csv, place.csv): a header line naming the
// columns, then one line per row, fields separated by commas. Read whole, cells found by column name.
//
// LIMITATIONS: a quoted field keeps its commas but not its quotes, and a quote cannot be escaped inside
// one; csv_line writes fields as they are (exasim's fields hold no comma or quote); files are read whole.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::report {

struct CsvTable {
  std::string path;                            ///< for errors
  std::vector<std::string> header;             ///< the first non-empty line's fields
  std::vector<std::vector<std::string>> rows;  ///< the other non-empty lines' fields
  std::vector<std::size_t> lines;              ///< the line number of each row (1-based)
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// The index of column `name`, or npos.
  [[nodiscard]] std::size_t column(std::string_view name) const;
  /// InputError naming the file and line of the first row whose field count is not the header's.
  void require_width() const;
  /// Cell (row, column) as a finite number; InputError naming the row and column otherwise.
  [[nodiscard]] double number(std::size_t row, std::string_view column) const;
  /// Cell (row, column) as text; "" when the table has no such column.
  [[nodiscard]] const std::string& cell(std::size_t row, std::string_view column) const;
};

/// Reads a CSV file; InputError naming the file when it cannot be read.
[[nodiscard]] CsvTable read_csv_table(const std::string& path);

/// One line of fields joined by commas, without the newline.
[[nodiscard]] std::string csv_line(const std::vector<std::string>& fields);

}  // namespace exasim::report
