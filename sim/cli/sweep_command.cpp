// `exasim sweep SCENARIO --vary KEY=V1,V2,...`: what-if studies. Every point (the cartesian product of
// the --vary lists, or with --zip the lists taken together) is the scenario with those --set overrides,
// simulated in full (batch.hpp), or tuned first with --tune (tune_run.hpp). docs/tune.md.

#include "sim/cli/batch.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/simulate.hpp"
#include "sim/cli/tune_run.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/core/output_files.hpp"
#include "sim/report/csv_table.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <ostream>
#include <sstream>

namespace exasim::cli {

namespace {

struct Vary {
  std::string key;
  std::vector<std::string> values;  ///< as written; each parsed as JSON, else a string (as --set)
};

/// Splits at commas outside brackets, braces and quotes, so that a value may be a JSON list or object.
std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> out(1);
  int depth = 0;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '[' || c == '{')) ++depth;
    if (!quoted && (c == ']' || c == '}')) --depth;
    if (c == ',' && depth == 0 && !quoted) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

Vary parse_vary(const std::string& text, const std::vector<Vary>& earlier) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--vary", text, "expected KEY=V1,V2,... with KEY a scenario field such as gpus or model.layers");
  Vary v{text.substr(0, eq), split_values(text.substr(eq + 1))};
  for (const auto& value : v.values)
    if (value.empty())
      throw InputError("--vary", text, "has an empty value; give KEY=V1,V2,... with at least one value, none empty");
  for (const auto& e : earlier)
    if (e.key == v.key) throw InputError("--vary", text, "varies " + v.key + " twice; give each key once");
  for (std::size_t i = 0; i < v.values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (v.values[i] == v.values[j])
        throw InputError("--vary", text, "lists " + v.values[i] + " twice; give each value once");
  return v;
}

/// The most points one sweep runs: each holds a scenario and a result in memory, and 10,000 points of a
/// real scenario are hours of simulation already.
constexpr std::size_t kMaxPoints = 10000;

/// The points: per point one value index per key. Cartesian (last key fastest) or zipped.
std::vector<std::vector<std::size_t>> points_of(const std::vector<Vary>& vary, bool zip) {
  std::vector<std::vector<std::size_t>> points;
  if (zip) {
    for (const auto& v : vary)
      if (v.values.size() != vary.front().values.size())
        throw InputError("--zip", v.key,
                         "has " + std::to_string(v.values.size()) + " values but " + vary.front().key + " has " +
                             std::to_string(vary.front().values.size()) + "; zipped lists must be equally long");
    if (vary.front().values.size() > kMaxPoints)
      throw InputError("--vary", vary.front().key,
                       "has more than " + std::to_string(kMaxPoints) + " values, the most points one sweep runs");
    for (std::size_t i = 0; i < vary.front().values.size(); ++i) points.emplace_back(vary.size(), i);
    return points;
  }
  std::size_t count = 1;
  for (const auto& v : vary) {
    if (v.values.size() > kMaxPoints / count)
      throw InputError("--vary", v.key,
                       "the cartesian product of the --vary lists has more than " + std::to_string(kMaxPoints) +
                           " points, the most one sweep runs; split the sweep or use --zip");
    count *= v.values.size();
  }
  std::vector<std::size_t> index(vary.size(), 0);
  for (;;) {
    points.push_back(index);
    std::size_t k = vary.size();
    while (k > 0 && ++index[k - 1] == vary[k - 1].values.size()) index[--k] = 0;
    if (k == 0) return points;
  }
}

/// "gx=2 gy=4 gz=8 gdata=16": the scheme's layout figures in its order (Scheme::describe).
std::string layout_label(const scenario::Scenario& s) {
  std::string out;
  for (const auto& field : scenario::scheme_of(s).describe(s)) {
    out += (out.empty() ? "" : " ") + field.name + "=" + scenario::shown(field);
  }
  return out;
}

struct Row {
  nlohmann::json point;     ///< key -> value
  nlohmann::json parallel;  ///< the configuration simulated
  std::string label;        ///< the same, as layout_label
  PointResult result;
  double scaling_efficiency_percent = -1;  ///< gpus varied: model TFLOP/s per GPU against the first point
};

nlohmann::json row_json(const Row& r) {
  nlohmann::json j = {{"point", r.point}, {"parallel", r.parallel}};
  j.update(r.result.to_json());
  if (r.scaling_efficiency_percent >= 0) j["scaling_efficiency_percent"] = r.scaling_efficiency_percent;
  return j;
}

/// Whether any point priced a job object (docs/job.md): the table and CSV then show its figures.
bool any_job(const std::vector<Row>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.result.job.is_null(); });
}

constexpr const char* kJobColumns[] = {"time_to_train_days", "goodput", "energy_MWh", "cost_usd", "interval_s"};

void print_csv(std::ostream& out, const std::vector<Vary>& vary, const std::vector<Row>& rows, bool scaling) {
  const bool job = any_job(rows);
  const auto number = [](double x) {
    return nlohmann::json(x).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::vector<std::string> header;
  for (const auto& v : vary) header.push_back(v.key);
  for (const char* column : {"parallel", "iteration_time_s", "tflops_per_gpu", "percent_of_peak", "mfu_percent",
                             "total_pflops", "memory_per_gpu_bytes"})
    header.emplace_back(column);
  if (scaling) header.emplace_back("scaling_efficiency_percent");
  if (job)
    for (const char* column : kJobColumns) header.emplace_back(column);
  header.emplace_back("error");
  out << report::csv_line(header) << '\n';
  for (const auto& r : rows) {
    std::vector<std::string> fields;
    for (const auto& v : vary)  // the value as JSON: a string keeps its quotes, doubled by csv_line
      fields.push_back(r.point[v.key].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    fields.push_back(r.label);
    const auto& p = r.result;
    const bool ok = p.error.empty();
    for (double x : {p.iteration_time_s, p.tflops_per_gpu, p.percent_of_peak, p.mfu_percent, p.total_pflops,
                     p.memory_per_gpu_bytes})
      fields.push_back(ok ? number(x) : "");
    if (scaling) fields.push_back(ok ? number(r.scaling_efficiency_percent) : "");
    if (job)
      for (const char* column : kJobColumns)
        fields.push_back(ok && !p.job.is_null() ? number(p.job.at(column).get<double>()) : "");
    fields.push_back(p.error);
    out << report::csv_line(fields) << '\n';
  }
}

/// A line under the table when layer sampling approximated some points (simulation.sample_layers).
void print_sampled_note(std::ostream& out, const std::vector<Row>& rows) {
  const auto sampled =
      std::count_if(rows.begin(), rows.end(), [](const Row& r) { return !r.result.sampled_layers.empty(); });
  if (sampled > 0)
    out << "  approximate: " << sampled << " of " << rows.size()
        << " points simulated with layer sampling (simulation.sample_layers; docs/performance.md)\n";
}

void print_table(std::ostream& out, const std::vector<Vary>& vary, const std::vector<Row>& rows, bool scaling) {
  char buf[256];
  auto width = [](const Vary& v) { return static_cast<int>(std::max<std::size_t>(v.key.size(), 10)); };
  out << "  ";
  for (const auto& v : vary) {
    std::snprintf(buf, sizeof buf, "%-*s ", width(v), v.key.c_str());
    out << buf;
  }
  // The parallel column as wide as its longest label (a Megatron layout with ep runs past 100
  // characters), so the figures line up under their headers.
  int label_width = 32;
  for (const auto& r : rows) label_width = std::max(label_width, static_cast<int>(r.label.size()));
  const bool job = any_job(rows);
  std::snprintf(buf, sizeof buf, "%-*s %12s %12s %7s %7s%s%s\n", label_width, "parallel", "iteration_s", "TFLOP/s/GPU",
                "%peak", "MFU%", scaling ? "  scaling%" : "", job ? "     days  goodput        MWh" : "");
  out << buf;
  for (const auto& r : rows) {
    out << "  ";
    for (const auto& v : vary) {
      const auto& value = r.point[v.key];  // a preset name reads better without its JSON quotes
      const auto text = value.is_string() ? value.get<std::string>()
                                          : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      std::snprintf(buf, sizeof buf, "%-*s ", width(v), text.c_str());
      out << buf;
    }
    const auto& p = r.result;
    if (!p.error.empty()) {
      out << "not simulated: " << p.error << "\n";
      continue;
    }
    out << r.label << std::string(static_cast<std::size_t>(label_width) - r.label.size(), ' ');
    std::snprintf(buf, sizeof buf, " %12.3f %12.1f %7.1f %7.1f", p.iteration_time_s, p.tflops_per_gpu,
                  p.percent_of_peak, p.mfu_percent);
    out << buf;
    if (scaling) {
      std::snprintf(buf, sizeof buf, " %9.1f", r.scaling_efficiency_percent);
      out << buf;
    }
    if (!p.job.is_null()) {
      std::snprintf(buf, sizeof buf, " %8.2f %8.4f %10.1f", p.job.at("time_to_train_days").get<double>(),
                    p.job.at("goodput").get<double>(), p.job.at("energy_MWh").get<double>());
      out << buf;
    }
    out << "\n";
  }
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  struct Options {
    std::string scenario_path, out_dir;
    std::vector<std::string> vary, overrides;
    bool zip = false, tune = false, json = false, csv = false;
    TuneFlags tune_flags;
    BatchOptions batch;
    std::int64_t sample_layers = 0;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("sweep", "Simulate a scenario over lists of field values (docs/tune.md)");
  cmd->add_option("scenario", o->scenario_path, "Scenario JSON file")->required();
  cmd->add_option("--vary", o->vary, "KEY=V1,V2,...: a scenario field and its values (repeatable)")
      ->allow_extra_args(false)
      ->required();
  cmd->add_flag("--zip", o->zip, "Vary the keys together (equally long lists) instead of their cartesian product");
  cmd->add_flag("--tune", o->tune,
                "Tune each point's parallel configuration first (exasim tune), then report its best");
  cmd->add_option("--top", o->tune_flags.top, "With --tune: grids simulated in full per point")->capture_default_str();
  cmd->add_option("--scheme", o->tune_flags.scheme,
                  "With --tune: scheme to search: " + scenario::scheme_names() + " or all")
      ->capture_default_str();
  add_batch_flags(*cmd, o->batch);
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("--csv", o->csv, "Print CSV rows");
  cmd->add_option("--out", o->out_dir,
                  "Also write sweep.json and sweep.csv into this directory (exasim report reads it)");
  cmd->add_option("--set", o->overrides, "Override a scenario field for every point: path=value (repeatable)")
      ->allow_extra_args(false);
  add_sample_layers_flag(*cmd, o->sample_layers);
  return {cmd, [o, cmd](std::ostream& out, std::ostream& err) {
            if (o->json && o->csv) throw InputError("--csv", "", "and --json are exclusive: give one");
            if (!o->tune && cmd->count("--top") > 0)
              throw InputError("--top", std::to_string(o->tune_flags.top),
                               "sets how many grids --tune simulates: give --tune too");
            // Checked before the points run: a bad --out must not cost a long sweep first.
            std::unique_ptr<OutputFiles> files;
            if (cmd->count("--out") > 0)
              files = std::make_unique<OutputFiles>("--out", o->out_dir,
                                                    std::vector<std::string>{"sweep.json", "sweep.csv"});
            std::vector<Vary> vary;
            for (const auto& text : o->vary) vary.push_back(parse_vary(text, vary));
            if (o->tune) check_tune_flags(o->tune_flags);
            if (!o->tune && o->tune_flags.scheme != TuneFlags{}.scheme)
              throw InputError("--scheme", o->tune_flags.scheme, "chooses what --tune searches: give --tune too");
            check_batch_options(o->batch);
            const auto points = points_of(vary, o->zip);

            std::vector<Row> rows;
            std::vector<scenario::Scenario> scenarios;
            for (const auto& point : points) {
              auto overrides = with_sample_layers(*cmd, o->overrides, o->sample_layers);
              Row row;
              for (std::size_t k = 0; k < vary.size(); ++k) {
                const auto& value = vary[k].values[point[k]];
                overrides.push_back(vary[k].key + "=" + value);
                row.point[vary[k].key] = parse_assignment(overrides.back()).value;
              }
              try {
                scenarios.push_back(o->tune ? load_for_tune(o->scenario_path, overrides)
                                            : scenario::load_scenario(o->scenario_path, overrides));
              } catch (const InputError& e) {
                throw InputError("--vary", row.point.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                 e.what());
              }
              rows.push_back(std::move(row));
            }

            BatchOptions batch = o->batch;
            batch.progress = !o->json && !o->csv;
            if (o->tune) {
              const auto tuned = tune_scenarios(scenarios, o->tune_flags, batch, err);
              for (std::size_t i = 0; i < rows.size(); ++i) {
                if (tuned[i].simulated.empty()) {
                  rows[i].result.error = "no grid fits (" + std::to_string(tuned[i].search.considered) +
                                         " considered, " + std::to_string(tuned[i].failed.size()) +
                                         " refused by the simulation)";
                  continue;
                }
                rows[i].parallel = tuned[i].simulated.front().scenario.resolved["parallel"];
                rows[i].label = layout_label(tuned[i].simulated.front().scenario);
                rows[i].result = tuned[i].simulated.front().result;
              }
            } else {
              std::vector<nlohmann::json> docs;
              for (const auto& s : scenarios) docs.push_back(s.resolved);
              const auto results = run_batch(docs, batch, err);
              for (std::size_t i = 0; i < rows.size(); ++i) {
                rows[i].parallel = scenarios[i].resolved["parallel"];
                rows[i].label = layout_label(scenarios[i]);
                rows[i].result = results[i];
              }
            }
            bool scaling = false;
            for (const auto& v : vary) scaling |= v.key == "gpus";
            if (scaling && rows.front().result.error.empty()) {
              for (auto& r : rows)
                if (r.result.error.empty())
                  r.scaling_efficiency_percent =
                      100 * r.result.model_tflops_per_gpu / rows.front().result.model_tflops_per_gpu;
            } else {
              scaling = false;
            }

            nlohmann::json j = {{"scenario", scenarios.front().name}, {"zip", o->zip}, {"tuned", o->tune}};
            for (const auto& v : vary) j["vary"].push_back(v.key);
            j["rows"] = nlohmann::json::array();
            for (const auto& r : rows) j["rows"].push_back(row_json(r));
            if (files) {
              files->stage_text("sweep.json", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
              std::ostringstream csv;
              print_csv(csv, vary, rows, scaling);
              files->stage_text("sweep.csv", csv.str());
              files->commit();
            }
            if (o->json) {
              out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
            } else if (o->csv) {
              print_csv(out, vary, rows, scaling);
            } else {
              out << "exasim sweep: " << scenarios.front().name << ", " << rows.size() << " points"
                  << (o->tune ? ", each tuned" : "") << "\n";
              print_table(out, vary, rows, scaling);
              print_sampled_note(out, rows);
            }
            return 0;
          }};
}

}  // namespace exasim::cli
