#include "sim/cli/simulate.hpp"

#include "sim/core/error.hpp"
#include "sim/flow/fast_runtime.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "sim/report/report.hpp"

#include <filesystem>
#include <fstream>
#include <ostream>

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
      if (hi < lo || hi >= world) bad("range " + item + " is outside 0-" + std::to_string(world - 1));
      for (auto r = lo; r <= hi; ++r) keep[r] = true;
    } catch (const std::logic_error&) {
      bad("'" + item + "' is not a rank or a range a-b");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return keep;
}

nlohmann::ordered_json simulate(const scenario::Scenario& s, const SimulateOptions& options, std::ostream& log) {
  if (options.backend != "fast") {
    throw InputError("--backend", options.backend,
                     options.backend == "simgrid" ? "the SimGrid backend is not built yet (allowed: fast)"
                                                  : "unknown backend (allowed: fast)");
  }
  auto plan = schedule::build_axonn4d_plan(s.model, s.axonn, s.training, s.overlap);
  auto topology = scenario::build_topology(s.machine, s.gpus);
  gpu::RooflineGpu gpu_model(s.machine.gpu);

  runtime::Job job;
  job.plan = &plan;
  job.collective_step_overhead_s = s.machine.collective_step_overhead_s;
  job.seed = s.seed;
  for (const auto& kernel : plan.kernels) job.kernel_time_s.push_back(gpu_model.time_s(kernel));

  report::TraceCollector collector(plan);
  std::vector<bool> traced;
  if (options.out_dir) {
    if (!options.trace_ranks.empty()) {
      traced = parse_rank_list(options.trace_ranks, s.gpus);
    } else if (s.gpus <= 256) {
      traced.assign(s.gpus, true);
    } else {
      traced = parse_rank_list("0-7", s.gpus);
      log << "exasim: tracing ranks 0-7 of " << s.gpus << " (choose others with --trace-ranks)\n";
    }
  }
  flow::FastRuntime fast(*topology, {options.reference_solver});
  auto observe = [&](runtime::Rank r) { return r < traced.size() && traced[r]; };
  runtime::OpObserver observer;
  if (options.out_dir) observer = collector.observer();
  auto result = fast.run(job, observe, observer);
  auto summary = report::summary_json(s, plan, result);
  // Wall time goes to the log, not the summary: outputs must be byte-identical run to run.
  log << "exasim: simulated " << s.gpus << " GPUs in " << result.wall_s << " s of wall time\n";

  if (options.out_dir) {
    std::filesystem::path dir(*options.out_dir);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InputError("--out", dir.string(), "cannot create directory: " + ec.message());
    auto rows = collector.rows();
    trace::write_csv((dir / "trace.csv").string(), rows);
    trace::write_chrome_json((dir / "trace.json").string(), rows, topology->gpus_per_node());
    std::ofstream(dir / "summary.json") << summary.dump(2) << '\n';
    std::ofstream(dir / "scenario.resolved.json") << s.resolved.dump(2) << '\n';
  }
  return summary;
}

}  // namespace exasim::cli
