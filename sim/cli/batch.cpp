#include "sim/cli/batch.hpp"

#include "sim/api/job.hpp"
#include "sim/api/simulate.hpp"
#include "sim/core/child_process.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/json_view.hpp"
#include "sim/core/output_files.hpp"
#include "sim/scenario/scenario.hpp"
#include "validate/mpirun.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <thread>

namespace exasim::cli {

namespace fs = std::filesystem;

nlohmann::json PointResult::to_json() const {
  if (!error.empty()) return {{"error", error}};
  nlohmann::json j = {{"iteration_time_s", iteration_time_s},
                      {"percent_of_peak", percent_of_peak},
                      {"tflops_per_gpu", tflops_per_gpu},
                      {"model_tflops_per_gpu", model_tflops_per_gpu},
                      {"mfu_percent", mfu_percent},
                      {"total_pflops", total_pflops},
                      {"memory_per_gpu_bytes", memory_per_gpu_bytes}};
  if (!sampled_layers.empty()) j["sampled_layers"] = sampled_layers;
  if (!job.is_null()) j["job"] = job;
  return j;
}

PointResult PointResult::from_json(const nlohmann::json& j) {
  PointResult r;
  if (j.contains("error")) {
    r.error = j.at("error").get<std::string>();
    return r;
  }
  r.iteration_time_s = j.at("iteration_time_s").get<double>();
  r.percent_of_peak = j.at("percent_of_peak").get<double>();
  r.tflops_per_gpu = j.at("tflops_per_gpu").get<double>();
  r.model_tflops_per_gpu = j.at("model_tflops_per_gpu").get<double>();
  r.mfu_percent = j.at("mfu_percent").get<double>();
  r.total_pflops = j.at("total_pflops").get<double>();
  r.memory_per_gpu_bytes = j.at("memory_per_gpu_bytes").get<double>();
  if (j.contains("sampled_layers")) r.sampled_layers = j.at("sampled_layers").get<std::vector<std::uint32_t>>();
  if (j.contains("job")) r.job = j.at("job");
  return r;
}

namespace {

/// `alone`: the only simulation this process runs at a time (--jobs 1), so a sampled one may take a
/// second CPU for its shorter sample (api::SimulateOptions::concurrent_samples).
PointResult simulate_point(const nlohmann::json& doc, bool alone) {
  PointResult r;
  try {
    const auto s = scenario::parse_scenario(doc, doc.value("name", std::string{"scenario"}));
    api::SimulateOptions options;
    options.concurrent_samples = alone;
    std::optional<api::JobReport> job;
    if (s.job) job = api::run_job(s, options);
    const auto summary = job ? job->baseline : api::simulate(s, options);
    if (job) {
      const auto j = api::to_json(*job);
      r.job = {{"time_to_train_days", j.at("time_to_train_days")},
               {"goodput", j.at("goodput")},
               {"energy_MWh", j.at("energy_MWh")},
               {"cost_usd", j.at("cost_usd")},
               {"interval_s", j.at("checkpoint").at("interval_s")},
               {"straggler_iteration_s", j.at("straggler_iteration_s")}};
    }
    r.iteration_time_s = summary.iteration_time_s;
    r.percent_of_peak = summary.percent_of_peak;
    r.tflops_per_gpu = summary.tflops_per_gpu;
    r.model_tflops_per_gpu = summary.model_tflops_per_gpu;
    r.mfu_percent = summary.mfu_percent;
    r.total_pflops = summary.total_pflops;
    r.memory_per_gpu_bytes = summary.memory.total();
    if (summary.sampled_layers) r.sampled_layers = {summary.sampled_layers->fewer, summary.sampled_layers->more};
  } catch (const InputError& e) {
    r.error = e.what();
  }
  return r;
}

/// Simulates scenarios worker, worker + workers, ... and appends {"index", "row"} lines to `out`.
void work_share(const std::vector<nlohmann::json>& scenarios, std::uint32_t worker, std::uint32_t workers,
                const fs::path& out) {
  std::ofstream file(out);
  for (std::size_t i = worker; i < scenarios.size(); i += workers) {
    file << nlohmann::json{{"index", i}, {"row", simulate_point(scenarios[i], false).to_json()}}.dump(
                -1, ' ', false, nlohmann::json::error_handler_t::replace)
         << '\n'
         << std::flush;
    // A full or read-only work directory: the rows would be lost, and the gather would call it a bug.
    if (!file)
      throw InputError("batch", out.string(),
                       std::string("cannot write the workers' rows: ") + std::strerror(errno) +
                           " (the work directory is under TMPDIR, or the current directory with --ranks)");
  }
}

std::size_t count_lines(const fs::path& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

/// Reads every worker's file into rows by index; a missing row is a bug of the split (std::runtime_error).
std::vector<PointResult> gather(const std::vector<fs::path>& files, std::size_t count) {
  std::vector<PointResult> rows(count);
  std::vector<bool> seen(count, false);
  for (const auto& path : files) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      const auto i = j.at("index").get<std::size_t>();
      rows.at(i) = PointResult::from_json(j.at("row"));
      seen[i] = true;
    }
  }
  for (std::size_t i = 0; i < count; ++i)
    if (!seen[i]) throw std::runtime_error("batch: no result came back for scenario " + std::to_string(i));
  return rows;
}

/// The batch's progress on the log: a bar redrawn in place on a terminal; elsewhere (a log file, CI) a
/// line at most every kLineEvery of wall time, so a long tune or sweep shows it is alive without
/// flooding the file. Wall time only reaches the log, never an output.
class Progress {
 public:
  Progress(bool on, std::size_t total, std::ostream& log)
      : on_(on), bar_(on && ::isatty(2)), total_(total), log_(log), last_(std::chrono::steady_clock::now()) {}
  void show(std::size_t done) {
    if (!on_) return;
    if (!bar_) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_ < kLineEvery || done == total_) return;
      last_ = now;
      log_ << "exasim: " << done << "/" << total_ << " simulated\n" << std::flush;
      return;
    }
    constexpr int kWidth = 30;
    const auto filled = total_ ? static_cast<int>(kWidth * done / total_) : kWidth;
    log_ << "\r  [" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "] " << done << "/" << total_
         << " simulated" << std::flush;
  }
  ~Progress() {
    if (bar_) log_ << "\n";
  }

 private:
  static constexpr std::chrono::seconds kLineEvery{5};
  bool on_, bar_;
  std::size_t total_;
  std::ostream& log_;
  std::chrono::steady_clock::time_point last_;
};

fs::path make_work_dir(const fs::path& parent) {
  static std::atomic<int> counter{0};
  auto dir = parent / ("exasim-batch-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw InputError("batch", dir.string(),
                     "cannot create a work directory: " + ec.message() + " (set TMPDIR to a writable directory)");
  return dir;
}

std::vector<PointResult> run_forked(const std::vector<nlohmann::json>& scenarios, std::uint32_t jobs,
                                    Progress& progress) {
  const auto dir = make_work_dir(scratch_root());
  std::vector<fs::path> files;
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (std::uint32_t j = 0; j < jobs; ++j) {
    files.push_back(dir / ("rows-" + std::to_string(j) + ".jsonl"));
    workers.push_back(std::make_unique<ChildProcess>([&, j] {
      work_share(scenarios, j, jobs, files[j]);
      return std::string();
    }));
  }
  // Rows reach the files one by one: counting their lines shows the progress while the workers run.
  while (true) {
    bool all_ready = true;
    for (auto& w : workers) all_ready = w->ready() && all_ready;
    std::size_t done = 0;
    for (const auto& f : files) done += count_lines(f);
    progress.show(done);
    if (all_ready) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& w : workers) {
    try {
      (void)w->get();
    } catch (const InputError&) {
      throw;
    } catch (const EnvironmentError&) {
      throw;
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("batch: a worker process failed: ") + e.what());
    }
  }
  auto rows = gather(files, scenarios.size());
  fs::remove_all(dir);
  return rows;
}

std::vector<PointResult> run_mpi(const std::vector<nlohmann::json>& scenarios, const BatchOptions& options,
                                 std::ostream& log) {
  // The batch file and the rows go through the current directory: on a cluster it is the shared one.
  const auto dir = make_work_dir(fs::current_path());
  try {
    write_stream_checked((dir / "batch.json").string(), [&](std::ostream& out) {
      out << nlohmann::json(scenarios).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    });
  } catch (const std::runtime_error& e) {
    throw InputError("--ranks", "", std::string("cannot write the batch for the MPI workers: ") + e.what());
  }
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError("--ranks", "", "cannot find the exasim binary (/proc/self/exe) to start under mpirun");
  validate::Launch launch;
  launch.ranks = static_cast<std::uint32_t>(options.ranks);
  launch.binary = self.string();
  launch.emu_args = {"batch-worker", (dir / "batch.json").string(), "--out", dir.string()};
  launch.hostfile = options.hostfile;
  launch.timeout_s = 7 * 24 * 3600.0;  // a sweep may take long; the user can interrupt it
  launch.stdout_to_stderr = true;
  try {
    if (validate::launch(launch, log) != 0)
      throw InputError("--ranks", std::to_string(options.ranks), "the batch workers refused their input");
  } catch (const validate::EmulationFailed& e) {  // no mpirun, a rank died: the user's to fix
    throw InputError("--ranks", std::to_string(options.ranks), e.what());
  }
  std::vector<fs::path> files;
  for (std::int64_t r = 0; r < options.ranks; ++r) files.push_back(dir / ("rows-" + std::to_string(r) + ".jsonl"));
  auto rows = gather(files, scenarios.size());
  fs::remove_all(dir);
  return rows;
}

}  // namespace

fs::path scratch_root() {
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir == nullptr || *tmpdir == '\0') return "/tmp";
  const fs::path root(tmpdir);
  std::error_code ec;
  if (!root.is_absolute() || !fs::is_directory(root, ec))
    throw InputError(
        "TMPDIR", tmpdir,
        "must be an absolute path to a writable directory (parallel runs and place keep scratch files there; "
        "unset it to use /tmp)");
  return root;
}

void check_batch_options(const BatchOptions& o) {
  if (o.jobs < 1 || o.jobs > 4096)
    throw InputError("--jobs", std::to_string(o.jobs), "must be a number of local processes from 1 to 4096");
  if (o.ranks < 0 || o.ranks > 65536)
    throw InputError("--ranks", std::to_string(o.ranks), "must be a number of MPI ranks from 1 to 65536 (0: none)");
  if (o.ranks > 0 && o.jobs > 1)
    throw InputError("--ranks", std::to_string(o.ranks), "give --jobs or --ranks, not both");
  if (!o.hostfile.empty() && o.ranks == 0)
    throw InputError("--hostfile", o.hostfile, "names the hosts of --ranks: give --ranks too");
  if (!o.hostfile.empty()) require_regular_file(o.hostfile, "an MPI hostfile");
}

void add_batch_flags(CLI::App& cmd, BatchOptions& options) {
  cmd.add_option("--jobs", options.jobs, "Local processes simulating at once")->capture_default_str();
  cmd.add_option("--ranks", options.ranks, "MPI ranks simulating at once, started with mpirun (0: none)")
      ->capture_default_str();
  cmd.add_option("--hostfile", options.hostfile, "mpirun --hostfile for --ranks (default: this host)");
}

std::vector<PointResult> run_batch(const std::vector<nlohmann::json>& scenarios, const BatchOptions& options,
                                   std::ostream& log) {
  check_batch_options(options);
  if (scenarios.empty()) return {};
  if (options.ranks > 0) return run_mpi(scenarios, options, log);
  Progress progress(options.progress, scenarios.size(), log);
  const auto jobs =
      static_cast<std::uint32_t>(std::min<std::size_t>(static_cast<std::size_t>(options.jobs), scenarios.size()));
  if (jobs > 1) return run_forked(scenarios, jobs, progress);
  std::vector<PointResult> rows;
  for (const auto& doc : scenarios) {
    rows.push_back(simulate_point(doc, true));
    progress.show(rows.size());
  }
  return rows;
}

Command add_batch_worker_command(CLI::App& app) {
  struct Options {
    std::string batch, out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("batch-worker", "Simulate this MPI rank's share of a batch (started by --ranks)");
  cmd->group("");  // hidden: mpirun starts it, users do not
  cmd->add_option("batch", o->batch, "JSON array of resolved scenarios")->required();
  cmd->add_option("--out", o->out, "Directory for rows-RANK.jsonl")->required();
  return {cmd, [o](std::ostream&, std::ostream&) {
            auto env = [](const char* a, const char* b) {
              const char* v = std::getenv(a);
              if (!v) v = std::getenv(b);
              return v ? static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10)) : 0u;
            };
            const auto rank = env("OMPI_COMM_WORLD_RANK", "PMI_RANK");
            auto size = env("OMPI_COMM_WORLD_SIZE", "PMI_SIZE");
            if (size == 0) size = 1;
            // Bounded, and malformed JSON is an InputError naming the file (read_json_file).
            const auto doc = read_json_file(o->batch);
            if (!doc.is_array()) throw InputError(o->batch, "", "must be a JSON array of scenario objects");
            std::vector<nlohmann::json> scenarios;
            for (std::size_t i = 0; i < doc.size(); ++i) {
              if (!doc[i].is_object())
                throw InputError(o->batch, "[" + std::to_string(i) + "]", "must be a scenario object");
              scenarios.push_back(doc[i]);
            }
            work_share(scenarios, rank, size, fs::path(o->out) / ("rows-" + std::to_string(rank) + ".jsonl"));
            return 0;
          }};
}

}  // namespace exasim::cli
