#include "sim/report/csv_table.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace exasim::report {

namespace {

std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
      out.back() += line[++i];  // "" inside quotes: one quote
    else if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else if (c != '\r')
      out.back() += c;
  }
  return out;
}

}  // namespace

std::size_t CsvTable::column(std::string_view name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? npos : static_cast<std::size_t>(it - header.begin());
}

void CsvTable::require_width() const {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].size() != header.size())
      throw InputError(path, "line " + std::to_string(lines[i]),
                       "has " + std::to_string(rows[i].size()) + " fields, expected " + std::to_string(header.size()));
}

const std::string& CsvTable::cell(std::size_t row, std::string_view name) const {
  static const std::string empty;
  const std::size_t c = column(name);
  return c == npos || c >= rows[row].size() ? empty : rows[row][c];
}

double CsvTable::number(std::size_t row, std::string_view name) const {
  const std::string& text = cell(row, name);
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::logic_error&) {}
  throw InputError(path, "row " + std::to_string(row + 1) + " " + std::string(name),
                   "'" + text + "' is not a finite number");
}

CsvTable read_csv_table(const std::string& path) {
  CsvTable table;
  table.path = path;
  std::istringstream in(read_input_text(path, "a CSV file"));
  std::size_t line_no = 0;
  bool header = true;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    if (header) {
      table.header = split_line(line);
      header = false;
      continue;
    }
    table.rows.push_back(split_line(line));
    table.lines.push_back(line_no);
  }
  return table;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    std::string field = fields[i];
    for (char& c : field)
      if (c == '\n' || c == '\r') c = ' ';
    if (i > 0) out += ',';
    if (field.find_first_of(",\"") == std::string::npos) {
      out += field;
      continue;
    }
    out += '"';
    for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += '"';
  }
  return out;
}

}  // namespace exasim::report
