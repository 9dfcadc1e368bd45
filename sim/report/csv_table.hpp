#pragma once
// The CSV files exasim writes and reads back (tune.csv, links.csv, place.csv): a header line naming the
// columns, then one line per row, fields separated by commas. Read whole, cells found by column name.
//
// Every CSV exasim writes joins its fields with csv_line, which quotes as RFC 4180 does (a field with a
// comma or a quote is quoted, its quotes doubled), so a value from a user (a scenario's JSON value, a
// label, a device name) can neither split a row nor start one.
//
// LIMITATIONS: one row is one line: csv_line writes a newline or carriage return inside a field as a
// space rather than a quoted line break, which the line-based reader could not read back; files are
// read whole.

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

/// One line of fields joined by commas, each quoted when it holds a comma or a quote, without the newline.
[[nodiscard]] std::string csv_line(const std::vector<std::string>& fields);

}  // namespace exasim::report
