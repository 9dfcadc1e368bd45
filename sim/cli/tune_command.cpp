// `exasim tune SCENARIO`: which parallel configuration of a scheme (--scheme: an AxoNN 4D grid, a
// Megatron tp x pp x dp layout, ...; any with --scheme all) to run on the scenario's GPUs. The analytic
// stage (sim/tune) ranks every configuration that fits; the best --top K are simulated in full over
// --jobs processes or --ranks MPI ranks (batch.hpp), and ranked by the simulated iteration time.
// docs/tune.md.

#include "sim/cli/batch.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/tune_run.hpp"

#include "sim/core/error.hpp"
#include "sim/core/output_files.hpp"
#include "sim/tune/tune_csv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>

namespace exasim::cli {

namespace {

nlohmann::json row_json(const TunedConfig& c) {
  return {{"scheme", c.scenario.resolved["parallel"]["scheme"]},
          {"parallel", c.scenario.resolved["parallel"]},
          {"recompute", schedule::to_string(c.candidate.recompute)},
          {"analytic_iteration_s", c.candidate.analytic_s},
          {"iteration_time_s", c.result.iteration_time_s},
          {"percent_of_peak", c.result.percent_of_peak},
          {"tflops_per_gpu", c.result.tflops_per_gpu},
          {"memory_per_gpu_bytes", c.result.memory_per_gpu_bytes}};
}

nlohmann::json tune_json(const TuneOutcome& t) {
  nlohmann::json simulated = nlohmann::json::array();
  for (const auto& c : t.simulated) simulated.push_back(row_json(c));
  nlohmann::json out = {{"scenario", t.base.name},
                        {"scheme", t.scheme},
                        {"gpus", t.base.gpus},
                        {"configs_considered", t.search.considered},
                        {"configs_fitting", t.search.fitting},
                        {"refused", t.search.refused},
                        {"analytic_configs_per_s", t.analytic_configs_per_s()},
                        {"simulated", simulated},
                        {"analytic_vs_simulated",
                         {{"configs", t.simulated.size()},
                          {"rank_correlation", t.accuracy.rank_correlation},
                          {"mean_abs_error_percent", t.accuracy.mean_abs_error_percent},
                          {"max_abs_error_percent", t.accuracy.max_abs_error_percent},
                          {"mean_error_percent", t.accuracy.mean_error_percent}}}};
  out["best"] = t.simulated.empty() ? nlohmann::json(nullptr) : row_json(t.simulated.front());
  return out;
}

/// A scheme's figures as the table's columns when its columns stand alone: right-aligned, each as wide
/// as its name and a space, at least 5.
std::string column_cells(const std::vector<std::string>& cells, const scenario::Scheme& alone) {
  std::string out;
  char cell[64];
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const int width = static_cast<int>(std::max<std::size_t>(5, alone.csv_columns[i].size() + 1));
    std::snprintf(cell, sizeof cell, " %*s", width, cells[i].c_str());
    out += cell;
  }
  return out;
}

void print_tune(std::ostream& out, const TuneOutcome& t) {
  const auto& b = t.base;
  // A scheme alone keeps one column per figure of its configuration; mixed, the label says it all.
  const scenario::Scheme* alone = tune::scheme_alone(t.searched);
  const std::string nouns =
      std::string(t.searched ? t.searched->candidate_noun : std::string_view("configuration")) + "s";
  out << "exasim tune: " << b.model.name << " on " << b.gpus << " x " << b.machine.gpu_choice.device.name << " ("
      << b.machine.name << "), global batch " << b.training.global_batch << ", "
      << (t.searched ? t.scheme : scenario::scheme_list(&scenario::Scheme::name)) << "\n";
  out << "  " << nouns << ": " << t.search.considered << " considered, " << t.search.fitting << " fit";
  if (!t.search.refused.empty()) {
    out << "; refused:";
    const char* sep = " ";
    for (const auto& [reason, n] : t.search.refused) {
      out << sep << reason << " " << n;
      sep = ", ";
    }
  }
  out << "\n  simulated the best " << t.simulated.size() << " by the analytic estimate, ranked by simulated time:\n";
  char line[512];
  if (alone) {
    std::vector<std::string> names(alone->csv_columns.begin(), alone->csv_columns.end());
    std::snprintf(line, sizeof line, " %11s %12s %7s %12s %10s\n", "analytic_s", "simulated_s", "%peak", "TFLOP/s/GPU",
                  "memory_GB");
    out << "  rank" << column_cells(names, *alone) << line;
  } else {
    std::snprintf(line, sizeof line, "  %4s %11s %12s %7s %12s %10s  %s\n", "rank", "analytic_s", "simulated_s",
                  "%peak", "TFLOP/s/GPU", "memory_GB", "configuration");
    out << line;
  }
  for (std::size_t i = 0; i < t.simulated.size(); ++i) {
    const auto& c = t.simulated[i];
    std::snprintf(line, sizeof line, " %11.3f %12.3f %7.1f %12.1f %10.1f", c.candidate.analytic_s,
                  c.result.iteration_time_s, c.result.percent_of_peak, c.result.tflops_per_gpu,
                  c.result.memory_per_gpu_bytes / 1e9);
    char rank[32];
    std::snprintf(rank, sizeof rank, "  %4zu", i + 1);
    if (alone)
      out << rank << column_cells(alone->to_csv(*c.candidate.config), *alone) << line << "\n";
    else
      out << rank << line << "  " << tune::row_label(c.candidate, alone) << "\n";
  }
  for (const auto& [label, error] : t.failed) out << "  not simulated: " << label << ": " << error << "\n";
  if (t.simulated.size() >= 2) {
    std::snprintf(line, sizeof line,
                  "  analytic vs simulated (%zu %s): rank correlation %.3f, mean |error| %.1f%%, max |error| "
                  "%.1f%%, mean error %.1f%%\n",
                  t.simulated.size(), nouns.c_str(), t.accuracy.rank_correlation, t.accuracy.mean_abs_error_percent,
                  t.accuracy.max_abs_error_percent, t.accuracy.mean_error_percent);
    out << line;
  }
  if (!t.simulated.empty()) {
    const auto& best = t.simulated.front();
    std::snprintf(line, sizeof line, ": %.3f s per iteration, %.1f%% of peak\n", best.result.iteration_time_s,
                  best.result.percent_of_peak);
    out << "  best: " << tune::row_label(best.candidate, alone) << line;
    if (!best.result.sampled_layers.empty())
      out << "  approximate: simulated with layer sampling (simulation.sample_layers; docs/performance.md)\n";
  }
}

/// Stages best.json (when a configuration was simulated) and tune.csv, then renames them into place.
void write_out(OutputFiles& files, const TuneOutcome& t) {
  if (!t.simulated.empty())
    files.stage_text(
        "best.json",
        t.simulated.front().scenario.resolved.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  // Every configuration that fits, in the analytic order; the simulated ones with their figures.
  std::vector<tune::TuneRow> rows;
  for (const auto& c : t.search.ranked) {
    tune::TuneRow row{c, std::nullopt};
    for (const auto& s : t.simulated)
      if (!tune::config_less(s.candidate, c) && !tune::config_less(c, s.candidate))
        row.simulated =
            tune::SimulatedFigures{s.result.iteration_time_s, s.result.percent_of_peak, s.result.tflops_per_gpu};
    rows.push_back(std::move(row));
  }
  files.stage_text("tune.csv", tune::write_tune_csv(tune::scheme_alone(t.searched), rows));
  files.commit();
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  struct Options {
    std::string scenario_path, out_dir;
    std::vector<std::string> overrides;
    TuneFlags tune;
    BatchOptions batch;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("tune", "Search the parallel configuration of a scenario's GPUs (docs/tune.md)");
  cmd->add_option("scenario", o->scenario_path, "Scenario JSON file: machine, model, GPUs and training")->required();
  std::string schemes_help;
  for (const auto& scheme : scenario::schemes())
    schemes_help += std::string(scheme.name) + " (" + std::string(scheme.searched) + "), ";
  cmd->add_option("--scheme", o->tune.scheme,
                  "Scheme to search: " + schemes_help + "or all (every scheme, ranked together)")
      ->capture_default_str();
  cmd->add_option("--top", o->tune.top, "Simulate the best K configurations of the analytic stage in full")
      ->capture_default_str();
  add_batch_flags(*cmd, o->batch);
  cmd->add_flag("--json", o->json, "Print one JSON object instead of the table");
  cmd->add_option("--out", o->out_dir, "Write best.json (a scenario for exasim simulate) and tune.csv here");
  cmd->add_option("--set", o->overrides, "Override a scenario field: path=value (repeatable)")->allow_extra_args(false);
  return {
      cmd, [o, cmd](std::ostream& out, std::ostream& err) {
        check_tune_flags(o->tune);
        check_batch_options(o->batch);
        // Checked before the search: a bad --out must not cost the simulations first.
        std::unique_ptr<OutputFiles> files;
        if (cmd->count("--out") > 0)
          files = std::make_unique<OutputFiles>("--out", o->out_dir, std::vector<std::string>{"best.json", "tune.csv"});
        auto base = load_for_tune(o->scenario_path, o->overrides);
        BatchOptions batch = o->batch;
        batch.progress = !o->json;
        const auto t = tune_scenario(base, o->tune, batch, err);
        // Wall time goes to the log: the table stays byte-identical run to run.
        err << "exasim: analytic stage: " << t.search.fitting << " configurations at "
            << static_cast<long long>(t.analytic_configs_per_s()) << " configs/s, after " << t.search.ring_setup_wall_s
            << " s of setup (each dimension's rings, Megatron's probe plans)\n";
        if (o->json)
          out << tune_json(t).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        else
          print_tune(out, t);
        if (files) write_out(*files, t);
        return 0;
      }};
}

}  // namespace exasim::cli
