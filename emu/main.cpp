// exasim-emu: runs a scenario's plan on real MPI processes (one per rank) with an emulated GPU and
// times every op (emulation mode), or measures this host for `exasim calibrate` (--microbench).
// Launched by `exasim emulate`, `exasim validate` and `exasim calibrate`, or by hand under mpirun.
//
// Exit codes: 0 success, 2 bad input (named file and field; or ranks that disagree on the scenario or
// binary), 3 a rank gave up (timeout), 1 a bug.

#include "emu/emulation_options.hpp"
#include "emu/microbench.hpp"
#include "emu/mpi_progress.hpp"
#include "emu/mpi_runtime.hpp"
#include "emu/trace_records.hpp"
#include "sim/core/error.hpp"
#include "sim/report/summary_views.hpp"
#include "sim/scenario/prepared_job.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace exasim;

struct Args {
  std::string scenario_path, out_dir, microbench_path, fail_mode;
  std::vector<std::string> overrides;
  emu::EmulationOptions options;
  std::string compute = "sleep";
  std::string collectives = "ring";
  double poll_us = 50;
  bool json = false, quick = false;
  int fail_rank = -1;
};

std::uint64_t fnv1a(std::string_view text, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Ranks started from different builds must not run together: they would disagree on the plan. A build
// is identified by a hash of this executable's own bytes, read at start-up from /proc/self/exe. Unlike
// __DATE__ __TIME__ (used before), it is reproducible (the same sources, compiler and flags give the same
// binary and the same id) and it tells apart any two builds that differ, even two made within the same
// second. A git describe or source hash configured by CMake would miss uncommitted edits and compiler or
// flag changes, and would relink on every commit. Hashing a few MB costs milliseconds per rank. Where
// /proc/self/exe cannot be read (not Linux), the id says so and only the scenario and options are compared.
std::string build_id() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  if (!in) return "exasim-emu (own binary unreadable)";
  std::uint64_t h = fnv1a("");
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)
    h = fnv1a(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())), h);
  std::string id = "exasim-emu binary fnv1a ";
  id += std::to_string(h);
  return id;
}

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// Every rank says whether it failed; returns true on all ranks if any did.
bool any_rank(bool failed) {
  int mine = failed ? 1 : 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any != 0;
}

/// The ranks must run the same binary on the same resolved scenario with the same options: compares a
/// hash of all three and names the ranks that differ from rank 0.
std::string mismatch(const std::string& fingerprint) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  unsigned long long mine = fnv1a(fingerprint);
  std::vector<unsigned long long> all(static_cast<std::size_t>(world));
  MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
  std::string differ;
  for (int r = 1; r < world; ++r)
    if (all[static_cast<std::size_t>(r)] != all[0]) {
      if (!differ.empty()) differ += ',';
      differ += std::to_string(r);
    }
  return differ;
}

void inject_fault(const Args& a) {
  if (a.fail_rank != world_rank()) return;
  if (a.fail_mode == "die") std::raise(SIGKILL);
  if (a.fail_mode == "hang")
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

int microbench(const Args& a) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world < 2) {
    if (world_rank() == 0) std::cerr << "exasim-emu: error: --microbench needs at least 2 ranks\n";
    return 2;
  }
  emu::MicrobenchOptions o;
  o.quick = a.quick;
  o.poll_interval_s = a.poll_us * 1e-6;
  o.timeout_s = a.options.timeout_s;
  auto result = emu::run_microbenchmarks(o);
  if (world_rank() == 0) {
    emu::publish_file(a.microbench_path, [&](std::ostream& out) { out << emu::to_json(result).dump(1) << '\n'; });
    std::cout << "exasim-emu: " << result.samples.size() << " microbenchmark points written to " << a.microbench_path
              << "\n";
  }
  return 0;
}

int emulate(const Args& a) {
  const int rank = world_rank();
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  std::unique_ptr<scenario::Scenario> s;
  std::string error;
  try {
    emu::validate_options(a.options);
    s = std::make_unique<scenario::Scenario>(scenario::load_scenario(a.scenario_path, a.overrides));
    if (s->gpus != static_cast<std::uint32_t>(world))
      throw InputError(a.scenario_path, "gpus",
                       "the scenario needs " + std::to_string(s->gpus) + " ranks, mpirun started " +
                           std::to_string(world) + " (run with -n " + std::to_string(s->gpus) + ")");
  } catch (const InputError& e) {
    error = e.what();
  }
  if (any_rank(!error.empty())) {
    if (!error.empty() && (rank == 0 || error.find("gpus") == std::string::npos))
      std::cerr << "exasim-emu: error: " << error << "\n";
    return 2;
  }
  std::string fingerprint = build_id() + "\n" + s->resolved.dump() + "\n";
  for (const auto& arg : a.options.to_args()) fingerprint += arg + " ";
  if (auto differ = mismatch(fingerprint); !differ.empty()) {
    if (rank == 0)
      std::cerr << "exasim-emu: error: ranks " << differ
                << " run a different exasim-emu build, scenario or options than rank 0 (check that every node"
                   " has the same binary and scenario file)\n";
    return 2;
  }

  auto prepared = scenario::prepare_job(*s);
  emu::apply_emulation_scales(*prepared, a.options);
  inject_fault(a);

  emu::MpiRuntime runtime(a.options, *prepared->topology);
  std::vector<emu::OpRecord> records;
  auto observer = [&](runtime::Rank r, std::uint32_t op, double t0, double t1) { records.push_back({r, op, t0, t1}); };
  auto result = runtime.run(prepared->job, {}, observer);
  if (rank != 0) return 0;

  const auto typed = report::make_summary(*s, prepared->plan, result);
  auto summary = report::to_json(typed);
  summary["measured_iterations_s"] = runtime.iteration_times_s();
  // Op classes of every measured iteration, in the order they ran: a validation takes its class medians
  // over all of them.
  summary["measured_op_classes"] = runtime.iteration_op_classes();
  summary["emulation"] = {{"ranks", world},
                          {"time_scale", a.options.time_scale},
                          {"bytes_scale", a.options.bytes_scale},
                          {"compute", emu::to_string(a.options.compute)},
                          {"collectives", emu::to_string(a.options.collectives)},
                          {"warmup", a.options.warmup},
                          {"poll_interval_s", a.options.poll_interval_s},
                          {"rank0_mean_sleep_overshoot_s", runtime.mean_sleep_overshoot_s()},
                          {"rank0_collectives_by_algorithm", runtime.collectives_by_algorithm()}};
  // Per rank, the compute the host ran for its emulated GPU in the reported iteration beside what its
  // plan asks: they differ only by host delays the emulated GPU did not pay back (emu/emulated_gpu.hpp).
  nlohmann::json planned = nlohmann::json::array();
  for (std::size_t r = 0; r < result.ranks.size(); ++r) {
    double plan_s = 0;
    for (const auto& op : prepared->plan.stream_of(static_cast<schedule::Rank>(r)).ops)
      if (op.type == schedule::OpType::Compute) plan_s += prepared->job.kernel_time_s[op.kernel];
    planned.push_back(plan_s);
  }
  summary["emulation"]["compute_per_rank_s"] = runtime.host_compute_per_rank_s();
  summary["emulation"]["plan_compute_per_rank_s"] = planned;
  summary["emulation"]["unpaid_delay_per_rank_s"] = runtime.unpaid_delay_per_rank_s();
  if (!a.out_dir.empty()) {
    std::filesystem::path dir(a.out_dir);
    std::filesystem::create_directories(dir);
    emu::publish_trace_csv((dir / "trace.csv").string(), emu::rows_of(prepared->plan, records));
    emu::publish_file((dir / "scenario.resolved.json").string(),
                      [&](std::ostream& out) { out << s->resolved.dump(2) << '\n'; });
    // Written last: its presence says the emulation completed.
    emu::publish_file((dir / "summary.json").string(), [&](std::ostream& out) { out << summary.dump(2) << '\n'; });
  }
  if (a.json) {
    std::cout << summary.dump() << "\n";
  } else {
    report::print_summary(std::cout, typed);
    std::cout << "  measured iterations (s):";
    for (double t : runtime.iteration_times_s()) std::cout << " " << t;
    std::cout << "  (median reported)\n  collectives of rank 0 by algorithm:";
    for (const auto& [algorithm, count] : runtime.collectives_by_algorithm())
      std::cout << " " << algorithm << " " << count;
    std::cout << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Args a;
  CLI::App app{"exasim-emu: runs a scenario on MPI processes with emulated GPUs (start it under mpirun)", "exasim-emu"};
  app.add_option("scenario", a.scenario_path, "Scenario JSON file");
  app.add_option("--set", a.overrides, "Override a scenario field: path=value (repeatable)")->allow_extra_args(false);
  app.add_option("--out", a.out_dir, "Write trace.csv, summary.json and scenario.resolved.json into this directory");
  app.add_flag("--json", a.json, "Print the summary as one JSON object");
  app.add_option("--time-scale", a.options.time_scale, "Compute time = GPU model time x this")->capture_default_str();
  app.add_option("--bytes-scale", a.options.bytes_scale, "Collective buffers = plan bytes x this (<= 1)")
      ->capture_default_str();
  app.add_option("--compute", a.compute, "sleep | spin | cpu (real GEMM tiles; at most one rank per core)")
      ->capture_default_str();
  app.add_option("--collectives", a.collectives,
                 "ring: exasim's collectives (collectives.algorithm) | mpi: the MPI library's for every collective")
      ->capture_default_str();
  app.add_option("--iterations", a.options.iterations, "Measured iterations (median reported)")->capture_default_str();
  app.add_option("--warmup", a.options.warmup, "Iterations run first and discarded")->capture_default_str();
  app.add_option("--poll-us", a.poll_us, "Test outstanding collectives every this many microseconds")
      ->capture_default_str();
  app.add_option("--timeout-s", a.options.timeout_s, "Abort when a rank is blocked this long")->capture_default_str();
  app.add_option("--microbench", a.microbench_path, "Run the calibration microbenchmarks; write samples JSON here");
  app.add_flag("--quick", a.quick, "Fewer repetitions of the microbenchmark points");
  app.add_option("--inject-fault", a.fail_mode, "Testing: die | hang, on --fault-rank")->group("");
  app.add_option("--fault-rank", a.fail_rank, "Testing: the rank that fails")->group("");
  int code = 0;
  try {
    app.parse(argc, argv);
    a.options.compute = emu::parse_compute_mode(a.compute);
    a.options.collectives = emu::parse_collective_algorithm(a.collectives);
    a.options.poll_interval_s = a.poll_us * 1e-6;
    if (a.microbench_path.empty() && a.scenario_path.empty())
      throw InputError("command line", "scenario", "give a scenario file, or --microbench FILE");
    code = a.microbench_path.empty() ? emulate(a) : microbench(a);
  } catch (const CLI::ParseError& e) {
    if (world_rank() == 0) code = app.exit(e);
    code = e.get_exit_code() == 0 ? 0 : 2;
  } catch (const InputError& e) {
    if (world_rank() == 0) std::cerr << "exasim-emu: error: " << e.what() << "\n";
    code = 2;
  } catch (const std::exception& e) {
    // One rank failing alone would leave the others blocked: end the whole job.
    emu::Poller::abort_job(std::string("internal error (please report): ") + e.what());
  }
  MPI_Finalize();
  return code;
}
