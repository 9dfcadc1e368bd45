#include "sim/cli/cli.hpp"

#include "sim/cli/roofline.hpp"
#include "sim/cli/simulate.hpp"
#include "sim/gpu/devices.hpp"
#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/report/report.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <ostream>

namespace exasim::cli {

namespace {
constexpr int kExitInput = 2;
constexpr int kExitBug = 1;
}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"exasim: predicts and explains LLM training iterations on GPU supercomputers", "exasim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "exasim 0.1.0");

  auto* sim = app.add_subcommand("simulate", "Simulate one training iteration of a scenario");
  std::string scenario_path;
  std::vector<std::string> overrides;
  SimulateOptions options;
  bool json = false;
  std::string out_dir;
  sim->add_option("scenario", scenario_path, "Scenario JSON file (see configs/scenarios/)")->required();
  sim->add_option("--backend", options.backend, "Runtime: fast (default); simgrid comes later")
      ->capture_default_str();
  sim->add_flag("--json", json, "Print one JSON object instead of the readable summary");
  sim->add_option("--out", out_dir, "Write trace.csv, trace.json (Perfetto), summary.json into this directory");
  sim->add_option("--set", overrides, "Override a scenario field: path=value (repeatable), e.g. gpus=128")
      ->allow_extra_args(false);
  sim->add_option("--trace-ranks", options.trace_ranks,
                  "Ranks to trace, e.g. 0-7,12 (default: all up to 256 GPUs, else 0-7)");
  sim->add_flag("--reference-solver", options.reference_solver,
                "Re-solve every flow at every event (slow; for checking the incremental solver)");

  auto* list = app.add_subcommand("presets", "List the shipped machine and model presets and the GPU devices");

  auto* roof = app.add_subcommand("roofline", "Time of one bf16 GEMM on a GPU (shape-aware model)");
  std::string roof_gpu, roof_gemm, roof_layout = "nn";
  roof->add_option("--gpu", roof_gpu, "Device (see `exasim presets`)")->required();
  roof->add_option("--gemm", roof_gemm, "Shape M,N,K of an M x K by K x N GEMM")->required();
  roof->add_option("--layout", roof_layout, "Operand layout")->check(CLI::IsMember({"nn", "nt", "tn"}))
      ->capture_default_str();
  bool roof_json = false;
  roof->add_flag("--json", roof_json, "Print one JSON object");

  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::Success& e) {
    app.exit(e, out, err);
    return 0;
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitInput;
  }

  try {
    if (*list) {
      out << "machines (topologies/presets):";
      for (const auto& n : preset_names("topologies/presets")) out << " " << n;
      out << "\nmodels (configs/models):";
      for (const auto& n : preset_names("configs/models")) out << " " << n;
      out << "\ngpus (roofline --gpu):";
      for (const auto& n : gpu::device_names()) out << " " << n;
      out << "\n";
      return 0;
    }
    if (*roof) {
      auto r = roofline(roof_gpu, roof_gemm, roof_layout);
      if (roof_json) {
        out << r.dump() << "\n";
      } else {
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s GEMM %lldx%lldx%lld (%s): %.4g s, %.1f TFLOP/s, %.1f%% of peak, %s bound (%lld tiles in %lld waves)\n",
                      r["gpu"].get<std::string>().c_str(), static_cast<long long>(r["m"].get<std::int64_t>()),
                      static_cast<long long>(r["n"].get<std::int64_t>()), static_cast<long long>(r["k"].get<std::int64_t>()),
                      roof_layout.c_str(), r["time_s"].get<double>(), r["tflops"].get<double>(),
                      r["percent_of_peak"].get<double>(), r["bound"].get<std::string>().c_str(),
                      static_cast<long long>(r["tiles"].get<std::int64_t>()), static_cast<long long>(r["waves"].get<std::int64_t>()));
        out << buf;
      }
      return 0;
    }
    if (!out_dir.empty()) options.out_dir = out_dir;
    auto scenario = scenario::load_scenario(scenario_path, overrides);
    auto summary = simulate(scenario, options, err);
    if (json) {
      out << summary.dump() << "\n";
    } else {
      report::print_summary(out, summary);
      if (options.out_dir) out << "  traces written to " << *options.out_dir << "/trace.csv and trace.json\n";
    }
    return 0;
  } catch (const InputError& e) {
    err << "exasim: error: " << e.what() << "\n";
    return kExitInput;
  } catch (const std::exception& e) {
    err << "exasim: internal error (please report): " << e.what() << "\n";
    return kExitBug;
  }
}

}  // namespace exasim::cli
