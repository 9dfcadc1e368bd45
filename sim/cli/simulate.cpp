#include "sim/cli/simulate.hpp"

#include "sim/cli/command.hpp"

#include "sim/api/layer_sampling.hpp"
#include "sim/api/simulate.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_files.hpp"
#include "sim/report/summary_views.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>
#include <sstream>

namespace exasim::cli {

std::vector<bool> parse_rank_list(const std::string& text, std::uint32_t world) {
  std::vector<bool> keep(world, false);
  auto bad = [&](const std::string& why) { throw InputError("--trace-ranks", text, why); };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto dash = item.find('-');
    try {
      std::size_t used = 0;
      unsigned long lo = std::stoul(item.substr(0, dash), &used);
      if (used != item.substr(0, dash).size()) bad("'" + item + "' is not a rank or a range a-b");
      unsigned long hi = lo;
      if (dash != std::string::npos) {
        hi = std::stoul(item.substr(dash + 1), &used);
        if (used != item.substr(dash + 1).size()) bad("'" + item + "' is not a range a-b");
      }
      if (hi < lo) bad("range " + item + " is reversed (write " + std::to_string(hi) + "-" + std::to_string(lo) + ")");
      if (hi >= world) bad("range " + item + " is outside 0-" + std::to_string(world - 1));
      for (auto r = lo; r <= hi; ++r) keep[r] = true;
    } catch (const std::logic_error&) {
      bad("'" + item + "' is not a rank or a range a-b");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return keep;
}

namespace {

/// The ranks `exasim simulate --out` traces: --trace-ranks, else all up to 256 GPUs, else 0-7 (said on `log`).
std::vector<bool> traced_ranks(const std::string& trace_ranks, std::uint32_t gpus, std::ostream& log) {
  if (!trace_ranks.empty()) return parse_rank_list(trace_ranks, gpus);
  if (gpus <= 256) return std::vector<bool>(gpus, true);
  log << "exasim: tracing ranks 0-7 of " << gpus << " (choose others with --trace-ranks)\n";
  return parse_rank_list("0-7", gpus);
}

/// Every file of --out; written under temporary names, renamed into place once all are written.
const std::vector<std::string> kOutFiles = {"trace.csv", "trace.json", "summary.json", "scenario.resolved.json"};

std::string dump(const nlohmann::ordered_json& j) {
  // `replace`: a path from the command line may hold bytes that are not UTF-8.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

report::Summary simulate(const scenario::Scenario& s, const SimulateFlags& options, std::ostream& log) {
  api::SimulateOptions run;
  run.backend = api::parse_backend(options.backend);
  run.check_memory = !options.ignore_memory;
  run.solver = api::parse_solver(options.solver);
  run.progress_bar = !options.quiet;
  run.hottest_links = options.hottest_links;
  run.concurrent_samples = true;  // one run: a sampled one may take a second CPU for its shorter sample
  const auto sampling = api::layer_sampling(s);
  // Checked before the simulation: a bad --out must not cost a long run first.
  std::unique_ptr<OutputFiles> out;
  std::vector<std::string> out_files = kOutFiles;
  if (options.hottest_links > 0) out_files.insert(out_files.begin() + 2, "links.csv");
  if (sampling && options.out_dir) {
    // The samples' traces would show K or 2K layers, not the iteration (layer_sampling.hpp).
    out_files = {"summary.json", "scenario.resolved.json"};
    out = std::make_unique<OutputFiles>("--out", *options.out_dir, out_files);
    log << "exasim: layer sampling: no traces (they would show " << sampling->fewer << " or " << sampling->more
        << " layers, not the iteration)\n";
  } else if (options.out_dir) {
    out = std::make_unique<OutputFiles>("--out", *options.out_dir, out_files);
    run.traced_ranks = traced_ranks(options.trace_ranks, s.gpus, log);
    run.on_trace = [&out](const scenario::PreparedJob& job, std::vector<trace::TraceRow> rows) {
      out->stage("trace.csv", [&](const std::string& path) { trace::write_csv(path, rows); });
      out->stage("trace.json",
                 [&](const std::string& path) { trace::write_chrome_json(path, rows, job.topology->gpus_per_node()); });
    };
    if (options.hottest_links > 0) {
      run.on_links = [&out](const scenario::PreparedJob& job, const runtime::RunResult& result) {
        std::ostringstream csv;
        report::write_links_csv(csv, *job.topology, result);
        out->stage_text("links.csv", csv.str());
      };
    }
  }
  // Passes grow linearly with the layers: a sampled run does fewer + more layers' worth.
  const double passes = scenario::rank_layer_passes(s) *
                        (sampling ? static_cast<double>(sampling->fewer + sampling->more) / sampling->layers : 1.0);
  if (passes > scenario::kLargeRunPasses) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "exasim: warning: a large run: %.3g layer passes over all GPUs (GPUs x layers x micro-batches); "
                  "expect %.0f s or more and gigabytes of memory (2-5 us a pass on 2 cores); progress shows on "
                  "stderr%s\n",
                  passes, passes * 2e-6,
                  sampling ? "" : "; --sample-layers 2 approximates it from runs of 2 and 4 layers");
    log << buf;
  }
  auto summary = api::simulate(s, run);
  // Wall time goes to the log, not the summary's views: outputs must be byte-identical run to run.
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.3g", summary.wall_s);
  if (!options.quiet) log << "exasim: simulated " << s.gpus << " GPUs in " << wall << " s of wall time\n";
  if (out) {
    summary.files_written = out_files;
    out->stage_text("summary.json", dump(report::to_json(summary)));
    out->stage_text("scenario.resolved.json", dump(nlohmann::ordered_json(s.resolved)));
    summary.files_written = out->commit();
  }
  return summary;
}

}  // namespace exasim::cli

namespace exasim::cli {

void add_sample_layers_flag(CLI::App& cmd, std::int64_t& sample_layers) {
  cmd.add_option("--sample-layers", sample_layers,
                 "Approximate: simulate K and 2K layers and extrapolate the times linearly to the model's layers "
                 "(for runs too large to simulate whole; errors measured in docs/performance.md). Same as --set "
                 "simulation.sample_layers=K");
}

std::vector<std::string> with_sample_layers(const CLI::App& cmd, std::vector<std::string> overrides,
                                            std::int64_t sample_layers) {
  if (cmd.count("--sample-layers") > 0)
    overrides.push_back("simulation.sample_layers=" + std::to_string(sample_layers));
  return overrides;
}

Command add_simulate_command(CLI::App& app) {
  struct Options {
    std::string scenario_path, out_dir;
    std::vector<std::string> overrides;
    SimulateFlags sim;
    std::int64_t sample_layers = 0;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("simulate", "Simulate one training iteration of a scenario");
  cmd->add_option("scenario", o->scenario_path, "Scenario JSON file (see configs/scenarios/)")->required();
  cmd->add_option("--backend", o->sim.backend,
                  "Runtime: fast (exasim's flow core, default) or simgrid (SimGrid 3.32 reference; much slower)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object instead of the readable summary");
  cmd->add_option("--out", o->out_dir, "Write trace.csv, trace.json (Perfetto), summary.json into this directory");
  cmd->add_option("--set", o->overrides, "Override a scenario field: path=value (repeatable), e.g. gpus=128")
      ->allow_extra_args(false);
  cmd->add_option("--trace-ranks", o->sim.trace_ranks,
                  "Ranks to trace, e.g. 0-7,12 (default: all up to 256 GPUs, else 0-7)");
  cmd->add_option("--links", o->sim.hottest_links,
                  "Meter every link: per class bytes, busy time and utilisation, the N hottest links and the group "
                  "traffic (in the summary and JSON; with --out, every link in links.csv)")
      ->expected(0, 1)
      ->default_str("10");
  cmd->add_flag("--quiet,-q", o->sim.quiet,
                "No progress on stderr (a bar on a terminal, else a line every 5 s of a long run) and no wall time");
  cmd->add_flag("--ignore-memory", o->sim.ignore_memory,
                "Simulate even when the memory model says the scenario does not fit the GPU's memory");
  cmd->add_option("--solver", o->sim.solver,
                  "Fast core's max-min solver: local (default), components or reference (slower, the same rates; "
                  "for checking the default)")
      ->capture_default_str();
  cmd->add_flag_callback(
      "--reference-solver", [o] { o->sim.solver = "reference"; },
      "Same as --solver reference: re-solve every flow at every event (slow)");
  add_sample_layers_flag(*cmd, o->sample_layers);
  return {cmd, [o, cmd](std::ostream& out, std::ostream& err) {
            SimulateFlags options = o->sim;
            if (cmd->count("--out") > 0) options.out_dir = o->out_dir;  // "" too: OutputFiles refuses it
            if (!options.trace_ranks.empty() && !options.out_dir)
              throw InputError("--trace-ranks", options.trace_ranks,
                               "traces are written only with --out DIR (give both, or leave --trace-ranks out)");
            auto scenario =
                scenario::load_scenario(o->scenario_path, with_sample_layers(*cmd, o->overrides, o->sample_layers));
            auto summary = simulate(scenario, options, err);
            if (o->json) {
              out << report::to_json(summary).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                  << "\n";
            } else {
              report::print_summary(out, summary);
              if (!summary.files_written.empty()) {
                out << "  files written to " << *options.out_dir << ":";
                for (const auto& f : summary.files_written) out << ' ' << f;
                out << "\n";
              }
            }
            return 0;
          }};
}

}  // namespace exasim::cli
