#pragma once
// What every report page is built from (sim/html/report_page.cpp and the per-page files beside this
// one): the page's sections and chart ids, a card, the HTML document around them, a CSV file read with
// a fixed header, and the line that names the job a folder simulated.

#include "sim/report/csv_table.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace exasim::html {
struct ReportPage;
}

namespace exasim::html::internal {

inline constexpr double kBig = 1e30;  // JSON figures are checked finite and non-negative, no tighter

/// What a page is made of: sections of HTML, the chart ids in order, notes.
struct Page {
  std::string body;
  std::vector<std::string> charts, notes;
  void chart(const std::string& id, const std::string& svg) {
    charts.push_back(id);
    body += svg;
  }
};

/// A figure with its caption, `id` on the figure's element.
[[nodiscard]] std::string card(const std::string& id, const std::string& value, const std::string& key);
/// "12.5%" of part over whole, "-" when whole is not positive.
[[nodiscard]] std::string percent(double part, double whole);
/// The whole HTML page.
[[nodiscard]] std::string document(const std::string& title, const std::string& subtitle, const Page& page);
/// A CSV file's rows whose header must be `header` (InputError naming the file and line otherwise).
[[nodiscard]] report::CsvTable read_csv_rows(const std::filesystem::path& path, const std::vector<std::string>& header);

/// The job a resolved scenario file (tune's best.json, place's scenario.json) simulates, as the commands
/// print it: "gpt-40b on 2048 x mi250x-gcd (frontier), global batch 1024". Empty when the file is absent
/// or does not load as a scenario; `scenario_name` gets its "name" when it has one.
[[nodiscard]] std::string job_title(const std::filesystem::path& scenario, std::string* scenario_name);

/// The sweep, tune, place and job pages (sweep_page.cpp, tune_page.cpp, place_page.cpp, job_page.cpp): the HTML, with
/// the title, charts and notes set in `out`.
[[nodiscard]] std::string sweep_page(const std::filesystem::path& dir, ReportPage& out);
[[nodiscard]] std::string tune_page(const std::filesystem::path& dir, ReportPage& out);
[[nodiscard]] std::string place_page(const std::filesystem::path& dir, ReportPage& out);
[[nodiscard]] std::string job_page(const std::filesystem::path& dir, ReportPage& out);

}  // namespace exasim::html::internal
