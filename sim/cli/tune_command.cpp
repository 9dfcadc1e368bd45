// `exasim tune SCENARIO`: which parallel configuration of a scheme (--scheme: an AxoNN 4D grid, a
// Megatron tp x pp x dp layout, ...; any with --scheme all) to run on the scenario's GPUs. The analytic
// stage (sim/tune) ranks every configuration that fits; the best --top K are simulated in full over
// --jobs processes or --ranks MPI ranks (batch.hpp), and ranked by the simulated iteration time.
// docs/tune.md.

#include "sim/cli/batch.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/place_run.hpp"
#include "sim/cli/simulate.hpp"
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
  nlohmann::json row = {{"scheme", c.scenario.resolved["parallel"]["scheme"]},
                        {"parallel", c.scenario.resolved["parallel"]},
                        {"recompute", schedule::to_string(c.candidate.recompute)},
                        {"analytic_iteration_s", c.candidate.analytic_s},
                        {"iteration_time_s", c.result.iteration_time_s},
                        {"mfu_percent", c.result.mfu_percent},
                        {"percent_of_peak", c.result.percent_of_peak},
                        {"tflops_per_gpu", c.result.tflops_per_gpu},
                        {"model_tflops_per_gpu", c.result.model_tflops_per_gpu},
                        {"memory_per_gpu_bytes", c.result.memory_per_gpu_bytes}};
  if (!c.result.sampled_layers.empty()) row["sampled_layers"] = c.result.sampled_layers;
  return row;
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
  if (t.search.fitting == 0) out["advice"] = no_fit_advice(t);
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
  out << "\n";
  if (t.search.fitting == 0) {
    out << no_fit_advice(t);
    return;
  }
  out << "  simulated the best " << t.simulated.size()
      << " by the analytic estimate; ranked by simulated iteration time, fastest first:\n";
  char line[512];
  if (alone) {
    std::vector<std::string> names(alone->csv_columns.begin(), alone->csv_columns.end());
    std::snprintf(line, sizeof line, " %11s %12s %6s %6s %12s %10s\n", "analytic_s", "simulated_s", "MFU%", "HFU%",
                  "TFLOP/s/GPU", "memory_GB");
    out << "  rank" << column_cells(names, *alone) << line;
  } else {
    std::snprintf(line, sizeof line, "  %4s %11s %12s %6s %6s %12s %10s  %s\n", "rank", "analytic_s", "simulated_s",
                  "MFU%", "HFU%", "TFLOP/s/GPU", "memory_GB", "configuration");
    out << line;
  }
  for (std::size_t i = 0; i < t.simulated.size(); ++i) {
    const auto& c = t.simulated[i];
    std::snprintf(line, sizeof line, " %11.3f %12.3f %6.1f %6.1f %12.1f %10.1f", c.candidate.analytic_s,
                  c.result.iteration_time_s, c.result.mfu_percent, c.result.percent_of_peak, c.result.tflops_per_gpu,
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
    std::snprintf(line, sizeof line, ": %.3f s per iteration, MFU %.1f%%, HFU %.1f%%\n", best.result.iteration_time_s,
                  best.result.mfu_percent, best.result.percent_of_peak);
    out << "  best: " << tune::row_label(best.candidate, alone) << line;
    out << "  MFU: the model's FLOPs per second against the GPUs' peak; HFU: the FLOPs the GPUs ran (recomputation\n"
           "  included) against it; TFLOP/s/GPU is HFU's numerator (docs/tune.md)\n";
    if (!best.result.sampled_layers.empty())
      out << "  approximate: simulated with layer sampling (simulation.sample_layers; docs/performance.md)\n";
  }
}

/// One tuned configuration after placement (place_run.hpp); `error` non-empty when place refused it.
struct TunedPlacement {
  std::size_t rank = 0;  ///< index into TuneOutcome::simulated
  PlacedConfig placed;
  std::string error;
};

/// Places the best `k` simulated configurations; the placed ones fastest first, then those refused.
std::vector<TunedPlacement> place_best(const TuneOutcome& t, std::size_t k, double budget_s, const BatchOptions& batch,
                                       std::ostream& log) {
  std::vector<TunedPlacement> out;
  for (std::size_t i = 0; i < std::min(k, t.simulated.size()); ++i) {
    TunedPlacement p;
    p.rank = i;
    log << "exasim: placing configuration " << i + 1 << " of " << std::min(k, t.simulated.size()) << "\n";
    try {
      p.placed = place_scenario(t.simulated[i].scenario, budget_s, 4, batch, log);
    } catch (const InputError& e) {
      p.error = e.what();
    }
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const TunedPlacement& a, const TunedPlacement& b) {
    if (a.error.empty() != b.error.empty()) return a.error.empty();
    return a.placed.plan_s < b.placed.plan_s;
  });
  return out;
}

nlohmann::json placed_json(const std::vector<TunedPlacement>& placed, const TuneOutcome& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : placed) {
    const auto& c = t.simulated[p.rank];
    nlohmann::json row = {{"tune_rank", p.rank + 1}, {"parallel", c.scenario.resolved["parallel"]}};
    if (!p.error.empty()) {
      row["error"] = p.error;
    } else {
      row.update({{"reference", p.placed.reference},
                  {"reference_iteration_s", p.placed.reference_s},
                  {"placement", p.placed.plan},
                  {"placed_iteration_s", p.placed.plan_s},
                  {"placements_simulated", p.placed.placements}});
    }
    rows.push_back(row);
  }
  return rows;
}

void print_placed(std::ostream& out, const std::vector<TunedPlacement>& placed, const TuneOutcome& t) {
  const scenario::Scheme* alone = tune::scheme_alone(t.searched);
  out << "\n  placed: the best " << placed.size()
      << " on the whole machine (exasim place), ranked by placed iteration time:\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %4s %9s %12s %9s %8s  %s\n", "rank", "tune_rank", "reference_s", "placed_s",
                "change", "configuration / placement");
  out << line;
  for (std::size_t i = 0; i < placed.size(); ++i) {
    const auto& p = placed[i];
    const auto label = tune::row_label(t.simulated[p.rank].candidate, alone);
    if (!p.error.empty()) {
      out << "  not placed: " << label << ": " << p.error << "\n";
      continue;
    }
    std::snprintf(line, sizeof line, "  %4zu %9zu %12.3f %9.3f %7.1f%%  ", i + 1, p.rank + 1, p.placed.reference_s,
                  p.placed.plan_s, 100 * (p.placed.plan_s / p.placed.reference_s - 1));
    out << line << label << " / " << p.placed.plan << "\n";
  }
  if (!placed.empty() && placed.front().error.empty()) {
    const auto& best = placed.front();
    std::snprintf(line, sizeof line, ": %.3f s per iteration (%s: %.3f s)\n", best.placed.plan_s,
                  best.placed.reference.c_str(), best.placed.reference_s);
    out << "  best placed: " << tune::row_label(t.simulated[best.rank].candidate, alone) << " / " << best.placed.plan
        << line;
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
        row.simulated = tune::SimulatedFigures{s.result.iteration_time_s, s.result.percent_of_peak,
                                               s.result.tflops_per_gpu, s.result.mfu_percent};
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
    std::int64_t place = 0;  ///< --place K: place the best K simulated configurations
    double place_budget_s = 10;
    std::int64_t sample_layers = 0;
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
  add_sample_layers_flag(*cmd, o->sample_layers);
  cmd->add_option("--place", o->place,
                  "Then plan the placement of the best K simulated configurations on the whole machine (as exasim "
                  "place) and rank them again by their placed time");
  cmd->add_option("--place-budget-s", o->place_budget_s, "Wall seconds of placement search per configuration")
      ->capture_default_str();
  return {
      cmd, [o, cmd](std::ostream& out, std::ostream& err) {
        check_tune_flags(o->tune);
        check_batch_options(o->batch);
        if (o->place < 0 || o->place > o->tune.top)
          throw InputError("--place", std::to_string(o->place),
                           "must be a number of configurations from 0 to --top (" + std::to_string(o->tune.top) + ")");
        if (!(o->place_budget_s > 0) || !(o->place_budget_s <= 86400))
          throw InputError("--place-budget-s", nlohmann::json(o->place_budget_s).dump(),
                           "must be a number of seconds above 0 and at most 86400");
        // Checked before the search: a bad --out must not cost the simulations first.
        std::unique_ptr<OutputFiles> files;
        if (cmd->count("--out") > 0)
          files = std::make_unique<OutputFiles>("--out", o->out_dir, std::vector<std::string>{"best.json", "tune.csv"});
        auto base = load_for_tune(o->scenario_path, with_sample_layers(*cmd, o->overrides, o->sample_layers));
        BatchOptions batch = o->batch;
        batch.progress = !o->json;
        const auto t = tune_scenario(base, o->tune, batch, err);
        // Wall time goes to the log: the table stays byte-identical run to run.
        err << "exasim: analytic stage: " << t.search.fitting << " configurations at "
            << static_cast<long long>(t.analytic_configs_per_s()) << " configs/s, after " << t.search.ring_setup_wall_s
            << " s of setup (each dimension's rings, Megatron's probe plans)\n";
        const auto placed = place_best(t, static_cast<std::size_t>(o->place), o->place_budget_s, batch, err);
        if (o->json) {
          auto j = tune_json(t);
          if (o->place > 0) j["placed"] = placed_json(placed, t);
          out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        } else {
          print_tune(out, t);
          if (o->place > 0) print_placed(out, placed, t);
        }
        if (t.search.fitting == 0) {
          err << "exasim: error: tune: no configuration fits; what to change: "
              << (o->json ? "the JSON's \"advice\"" : "above") << "\n";
          return kExitNothingFits;
        }
        if (files) write_out(*files, t);
        return 0;
      }};
}

}  // namespace exasim::cli
