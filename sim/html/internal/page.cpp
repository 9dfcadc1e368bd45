#include "sim/html/internal/page.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/html/internal/assets.hpp"
#include "sim/html/internal/svg.hpp"
#include "sim/scenario/scenario.hpp"

namespace exasim::html::internal {

std::string card(const std::string& id, const std::string& value, const std::string& key) {
  return "<div class=\"card\"><div class=\"v\" id=\"" + id + "\">" + escape(value) + "</div><div class=\"k\">" +
         escape(key) + "</div></div>";
}

std::string percent(double part, double whole) { return whole > 0 ? fmt("%.1f%%", 100 * part / whole) : "-"; }

std::string document(const std::string& title, const std::string& subtitle, const Page& page) {
  std::string notes;
  for (const auto& n : page.notes) notes += "<li>" + escape(n) + "</li>";
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>exasim report: " +
         escape(title) + "</title>\n<style>" + page_css() +
         "</style>\n</head>\n<body>\n<div id=\"js-status\" data-errors=\"0\" data-ready=\"0\" hidden></div>\n<script>" +
         error_trap_script() + "</script>\n<header><h1>exasim report: " + escape(title) + "</h1><p>" +
         escape(subtitle) + "</p></header>\n<main>\n" + page.body +
         (notes.empty() ? ""
                        : "<section id=\"notes\"><h2>What this page leaves out</h2><ul class=\"note\">" + notes +
                              "</ul></section>\n") +
         "<p class=\"note\">Written by exasim report; self-contained (no network). Charts: " +
         std::to_string(page.charts.size()) + ".</p>\n</main>\n<script>" + page_script() +
         "</script>\n</body>\n</html>\n";
}

report::CsvTable read_csv_rows(const std::filesystem::path& path, const std::vector<std::string>& header) {
  auto table = report::read_csv_table(path.string());
  if (table.header != header)
    throw InputError(path.string(), "line 1", "expected the header " + report::csv_line(header));
  table.require_width();
  return table;
}

std::string job_title(const std::filesystem::path& scenario, std::string* scenario_name) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(scenario, ec)) return "";
  try {
    auto doc = read_json_file(scenario.string());
    if (!doc.is_object()) return "";
    if (scenario_name != nullptr && doc.contains("name") && doc.at("name").is_string())
      *scenario_name = doc.at("name").get<std::string>();
    // The placement is not part of the title, and a placement file may not be where the scenario says.
    doc.erase("placement");
    const auto s = scenario::parse_scenario(doc, scenario.string());
    return s.model.name + " on " + std::to_string(s.gpus) + " x " + s.machine.gpu_choice.device.name + " (" +
           s.machine.name + "), global batch " + std::to_string(s.training.global_batch);
  } catch (const std::exception&) {
    return "";  // an older or edited file: the page falls back to the scenario's name
  }
}

}  // namespace exasim::html::internal
