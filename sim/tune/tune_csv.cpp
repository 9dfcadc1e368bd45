#include "sim/tune/tune_csv.hpp"

#include "sim/core/error.hpp"
#include "sim/report/csv_table.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace exasim::tune {

namespace {

const std::vector<std::string> kFigures = {"analytic_iteration_s", "memory_per_gpu_bytes", "iteration_time_s",
                                           "percent_of_peak",      "tflops_per_gpu",       "mfu_percent"};
/// Figures a table may lack: written before the column was (read back as unknown).
const std::vector<std::string> kOptionalFigures = {"mfu_percent"};

/// The configuration columns of a table of every scheme: each scheme's, in table order; a column that
/// several schemes name (micro_batch) once, where it first appears.
std::vector<std::string> shared_columns() {
  std::vector<std::string> out;
  for (const auto& scheme : scenario::schemes())
    for (const auto column : scheme.csv_columns)
      if (std::find(out.begin(), out.end(), column) == out.end()) out.emplace_back(column);
  return out;
}

std::vector<std::string> header_of(const scenario::Scheme* alone) {
  std::vector<std::string> out;
  if (alone) {
    out.assign(alone->csv_columns.begin(), alone->csv_columns.end());
  } else {
    out.emplace_back("scheme");
    const auto columns = shared_columns();
    out.insert(out.end(), columns.begin(), columns.end());
    out.emplace_back("recompute");
  }
  out.insert(out.end(), kFigures.begin(), kFigures.end());
  return out;
}

std::string number(double v) { return nlohmann::json(v).dump(); }

std::vector<std::string> cells_of(const TuneRow& row, const scenario::Scheme* alone) {
  const auto& c = row.candidate;
  std::vector<std::string> out;
  if (alone) {
    out = c.scheme->to_csv(*c.config);
  } else {
    out.emplace_back(c.scheme->name);
    // The scheme's own cells under their columns, the other schemes' columns empty.
    const auto columns = shared_columns();
    const auto own = c.scheme->to_csv(*c.config);
    std::vector<std::string> config(columns.size());
    for (std::size_t i = 0; i < own.size(); ++i) {
      const auto at = std::find(columns.begin(), columns.end(), c.scheme->csv_columns[i]) - columns.begin();
      config[static_cast<std::size_t>(at)] = own[i];
    }
    out.insert(out.end(), config.begin(), config.end());
    out.emplace_back(schedule::to_string(c.recompute));
  }
  out.push_back(number(c.analytic_s));
  out.push_back(number(c.memory_bytes));
  const auto& f = row.simulated;
  out.push_back(f ? number(f->iteration_time_s) : "");
  out.push_back(f ? number(f->percent_of_peak) : "");
  out.push_back(f ? number(f->tflops_per_gpu) : "");
  out.push_back(f && f->mfu_percent >= 0 ? number(f->mfu_percent) : "");
  return out;
}

/// Whether `header` names the columns of `layout`, in any order, an optional figure perhaps missing.
bool same_columns(std::vector<std::string> header, std::vector<std::string> layout) {
  for (const auto& optional : kOptionalFigures)
    if (std::find(header.begin(), header.end(), optional) == header.end())
      layout.erase(std::remove(layout.begin(), layout.end(), optional), layout.end());
  std::sort(header.begin(), header.end());
  std::sort(layout.begin(), layout.end());
  return header == layout;
}

/// Whether `header` is a table of every scheme as written before the scheme table grew: "scheme",
/// "recompute" and the figures, and only columns the table has now. Its rows name the schemes it had, and
/// a row whose scheme's columns are missing fails on its first missing cell.
bool older_mixed_columns(const std::vector<std::string>& header) {
  const auto all = header_of(nullptr);
  const auto has = [&](const std::string& column) {
    return std::find(header.begin(), header.end(), column) != header.end();
  };
  const auto required = [&](const std::string& column) {
    return has(column) || std::find(kOptionalFigures.begin(), kOptionalFigures.end(), column) != kOptionalFigures.end();
  };
  return has("scheme") && has("recompute") && std::all_of(kFigures.begin(), kFigures.end(), required) &&
         std::all_of(header.begin(), header.end(),
                     [&](const std::string& column) { return std::find(all.begin(), all.end(), column) != all.end(); });
}

/// The layout whose columns `table` has: the scheme alone, or nullptr for every scheme's columns.
const scenario::Scheme* layout_of(const report::CsvTable& table) {
  if (same_columns(table.header, header_of(nullptr)) || older_mixed_columns(table.header)) return nullptr;
  std::string want = report::csv_line(header_of(nullptr));
  for (const auto& scheme : scenario::schemes()) {
    if (scheme_alone(&scheme) != &scheme) continue;
    if (same_columns(table.header, header_of(&scheme))) return &scheme;
    want = report::csv_line(header_of(&scheme)) + " or " + want;
  }
  throw InputError(table.path, "line 1", "expected the header " + want + " (columns in any order)");
}

}  // namespace

const scenario::Scheme* scheme_alone(const scenario::Scheme* searched) {
  return searched && !searched->searches_recompute ? searched : nullptr;
}

std::string row_label(const Candidate& c, const scenario::Scheme* alone) {
  return (alone ? "" : std::string(c.scheme->name) + " ") + config_label(c);
}

std::string write_tune_csv(const scenario::Scheme* alone, const std::vector<TuneRow>& rows) {
  std::string out = report::csv_line(header_of(alone)) + "\n";
  for (const auto& row : rows) out += report::csv_line(cells_of(row, alone)) + "\n";
  return out;
}

TuneCsv read_tune_csv(const std::string& path) {
  const auto table = report::read_csv_table(path);
  TuneCsv out;
  out.alone = layout_of(table);
  table.require_width();
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const scenario::CsvCells cells{[&](std::string_view column) { return table.cell(i, column); },
                                   [&](std::string_view column, const std::string& why) {
                                     throw InputError(path, "row " + std::to_string(i + 1) + " " + std::string(column),
                                                      why);
                                   }};
    TuneRow row;
    auto& c = row.candidate;
    c.scheme = out.alone;
    if (!c.scheme) {
      c.scheme = scenario::find_scheme(table.cell(i, "scheme"));
      if (!c.scheme)
        cells.fail("scheme", "'" + table.cell(i, "scheme") + "' is not one of: " + scenario::scheme_names());
      const auto recompute = schedule::parse_recompute(table.cell(i, "recompute"));
      if (!recompute) cells.fail("recompute", "'" + table.cell(i, "recompute") + "' is not full, selective or none");
      c.recompute = *recompute;
    }
    c.config = c.scheme->from_csv(cells);
    c.analytic_s = table.number(i, "analytic_iteration_s");
    c.memory_bytes = table.number(i, "memory_per_gpu_bytes");
    if (!table.cell(i, "iteration_time_s").empty()) {
      row.simulated = SimulatedFigures{table.number(i, "iteration_time_s"), table.number(i, "percent_of_peak"),
                                       table.number(i, "tflops_per_gpu")};
      if (!table.cell(i, "mfu_percent").empty()) row.simulated->mfu_percent = table.number(i, "mfu_percent");
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace exasim::tune
