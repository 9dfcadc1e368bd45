#include "validate/validation.hpp"

#include "emu/microbench_samples.hpp"
#include "emu/trace_records.hpp"
#include "sim/api/simulate.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/report/trace_collector.hpp"
#include "validate/internal/calibration_fit.hpp"
#include "validate/mpirun.hpp"

#include <unistd.h>  // gethostname, getpid

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <thread>

namespace exasim::validate {

namespace fs = std::filesystem;

namespace {

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

scenario::Scenario checked_scenario(const std::string& path, const std::vector<std::string>& overrides,
                                    std::uint32_t ranks) {
  auto s = scenario::load_scenario(path, overrides);
  if (s.gpus != ranks)
    throw InputError(path, "gpus",
                     "the scenario has " + std::to_string(s.gpus) + " GPUs but --ranks is " + std::to_string(ranks) +
                         " (one MPI rank per GPU)");
  return s;
}

fs::path temp_out_dir() {
  static std::atomic<int> counter{0};
  auto dir =
      fs::temp_directory_path() / ("exasim-validate-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  return dir;
}

}  // namespace

namespace {

struct MicrobenchRun {
  emu::Microbench bench;
  HostCalibration fit;
};

/// The host fitted to `bench`; EmulationFailed naming `samples_path` when its points fit no machine.
HostCalibration fit_or_fail(const emu::Microbench& bench, const std::string& samples_path) {
  try {
    return fit_host(bench);
  } catch (const std::invalid_argument& e) {
    throw EmulationFailed(std::string("the calibration microbenchmarks fit no machine (") + e.what() +
                          "); the samples are in " + samples_path);
  }
}

/// One run of the calibration microbenchmarks under mpirun, fitted.
MicrobenchRun run_microbench(const CalibrateOptions& o, const std::string& samples_path, std::ostream& log) {
  Launch l;
  l.ranks = o.ranks;
  l.emu_args = {"--microbench", samples_path,       "--poll-us", number(o.poll_interval_s * 1e6),
                "--timeout-s",  number(o.timeout_s)};
  if (o.quick) l.emu_args.push_back("--quick");
  l.hostfile = o.hostfile;
  l.timeout_s = o.timeout_s;
  l.stdout_to_stderr = true;
  if (launch(l, log) != 0) throw EmulationFailed("the calibration microbenchmarks failed");
  auto bench = emu::microbench_from_json(read_json_file(samples_path), samples_path);
  const HostCalibration fit = fit_or_fail(bench, samples_path);
  return {std::move(bench), fit};
}

/// What the host looked like when it was calibrated: what a later reuse compares against.
nlohmann::ordered_json current_conditions(const CalibrateOptions& o) {
  double load[1] = {-1};
  if (getloadavg(load, 1) != 1) load[0] = -1;
  return {{"ranks", o.ranks},
          {"cores", std::thread::hardware_concurrency()},
          {"load_1min", load[0]},
          {"quick", o.quick},
          {"hostfile", o.hostfile}};
}

}  // namespace

std::string default_calibration_path(std::uint32_t ranks) {
  fs::path dir;
  if (const char* d = std::getenv("EXASIM_CACHE_DIR"))
    dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"))
    dir = fs::path(x) / "exasim";
  else if (const char* h = std::getenv("HOME"))
    dir = fs::path(h) / ".cache" / "exasim";
  else
    dir = fs::temp_directory_path() / "exasim-cache";
  // v4: collectives.group_order "concurrent" (the emulator's MPI progress) and step-cost rows per group size;
  // a v3 file simulates a group's collectives one at a time, as NCCL runs them.
  // v3: the ring points are also fitted per kind and size band (collectives.step_costs), which a v2 file lacks.
  // v2: all-gather and reduce-scatter run as rings (emu/collectives/ring_collective.hpp); a v1 file measured
  // Open MPI's linear algorithms.
  return (dir / ("calibration-v4-" + host_name() + "-" + std::to_string(ranks) + "ranks.json")).string();
}

std::string calibrate(const CalibrateOptions& o, std::ostream& log) {
  if (o.ranks < 2 || o.ranks > 4096)
    throw InputError("--ranks", std::to_string(o.ranks), "calibration needs 2 to 4096 ranks");
  if (o.repeats < 1 || o.repeats > 20)
    throw InputError("--repeats", std::to_string(o.repeats), "1 to 20 calibration runs (3 by default)");
  if (!(o.max_steal_pct >= 0 && o.max_steal_pct <= 100))  // NaN compares false
    throw InputError("--max-steal-pct", std::to_string(o.max_steal_pct),
                     "a percentage of the CPU time from 0 to 100 (100: keep every run)");
  const std::string out = o.out.empty() ? default_calibration_path(o.ranks) : o.out;
  const fs::path out_path(out);
  std::error_code ec;
  if (out_path.has_parent_path()) fs::create_directories(out_path.parent_path(), ec);
  if (ec) throw InputError("--out", out, "cannot create its directory: " + ec.message());
  const std::string samples_path = out + ".samples.json";

  // A run the hypervisor disturbed prices every collective slow, and a cached calibration outlives the
  // moment: run it again, as validate does its emulations, and keep the least disturbed.
  std::vector<MicrobenchRun> all_runs;
  const QuietRuns quiet = run_until_quiet(o.repeats, o.max_steal_pct, [&] {
    const auto cpu_before = read_cpu_counters();
    all_runs.push_back(run_microbench(o, samples_path, log));
    return steal_pct(cpu_before, read_cpu_counters());
  });
  const double disturbed_bound = std::max(o.max_steal_pct, kDisturbedStealPct);
  const PooledRuns pooled_runs = runs_to_pool(quiet, disturbed_bound);
  std::vector<MicrobenchRun> runs;
  std::vector<double> kept_stolen, dropped_stolen;
  for (std::size_t i = 0; i < all_runs.size(); ++i) {
    if (pooled_runs.pooled[i]) {
      runs.push_back(std::move(all_runs[i]));
      kept_stolen.push_back(quiet.steal_pct[i]);
    } else {
      dropped_stolen.push_back(quiet.steal_pct[i]);
    }
  }
  std::vector<double> bandwidths, latencies;
  for (const MicrobenchRun& r : runs) {
    bandwidths.push_back(r.fit.collectives.bandwidth_Bps);
    latencies.push_back(r.fit.collectives.latency_s);
  }
  const Spread bandwidth = spread_of(bandwidths), latency = spread_of(latencies);
  // One fit over every kept run's points. A step-cost row of one group size has two points per run
  // (one per buffer size in its band), so the rows of any single run carry that run's noise; pooled,
  // each point of the microbenchmark counts once per run. The samples file then holds what was fitted.
  emu::Microbench pooled = runs.front().bench;
  for (std::size_t i = 1; i < runs.size(); ++i)
    pooled.samples.insert(pooled.samples.end(), runs[i].bench.samples.begin(), runs[i].bench.samples.end());
  emu::publish_file(samples_path, [&](std::ostream& f) { f << emu::to_json(pooled).dump(2) << '\n'; });
  const HostCalibration fit = fit_or_fail(pooled, samples_path);
  auto machine = machine_json(fit, pooled);
  machine["sources"]["calibration_runs"] = runs.size();
  machine["sources"]["collectives_bandwidth_runs_Bps"] = bandwidths;
  machine["sources"]["collectives_latency_runs_s"] = latencies;
  machine["sources"]["collectives_bandwidth_spread_pct"] = bandwidth.spread_pct;
  machine["sources"]["collectives_latency_spread_pct"] = latency.spread_pct;
  machine["sources"]["calibration_steal_pct"] = kept_stolen;
  machine["sources"]["calibration_dropped_steal_pct"] = dropped_stolen;
  machine["sources"]["calibration_disturbed"] = pooled_runs.disturbed;
  machine["sources"]["conditions"] = current_conditions(o);
  machine["sources"]["conditions"]["collectives_bandwidth_Bps"] = fit.collectives.bandwidth_Bps;
  machine["sources"]["conditions"]["collectives_latency_s"] = fit.collectives.latency_s;
  emu::publish_file(out, [&](std::ostream& f) { f << machine.dump(2) << '\n'; });
  log << "exasim: calibrated " << pooled.host << " with " << o.ranks
      << " ranks: " << fit.collectives.bandwidth_Bps / 1e9 << " GB/s per rank, " << fit.collectives.latency_s * 1e6
      << " us per ring step (rms error " << 100 * fit.collectives.rms_relative_error << "%)";
  if (runs.size() > 1)
    log << "; one fit over " << runs.size() << " runs, each fitted alone: bandwidth " << bandwidth.min / 1e9 << "-"
        << bandwidth.max / 1e9 << " GB/s (spread " << bandwidth.spread_pct << "%), step latency " << latency.min * 1e6
        << "-" << latency.max * 1e6 << " us (spread " << latency.spread_pct << "%)";
  if (!dropped_stolen.empty())
    log << "; " << dropped_stolen.size() << " more runs left out, the hypervisor having taken more than "
        << o.max_steal_pct << "% of the CPU time during some";
  log << "; written to " << out << "\n";
  if (pooled_runs.disturbed)
    log << "exasim: warning: the hypervisor took more than " << disturbed_bound
        << "% of the CPU time during every calibration run kept (up to "
        << *std::max_element(kept_stolen.begin(), kept_stolen.end())
        << "%): this calibration describes a disturbed host; validate measures it again before reusing it and gives "
           "no verdict on it\n";
  return out;
}

int emulate(const std::string& scenario_path, const EmulateOptions& o, std::ostream& log) {
  emu::validate_options(o.emu);
  (void)checked_scenario(scenario_path, o.overrides, o.ranks);
  if (o.out_dir.empty()) throw InputError("--out", "", "an output directory is required");
  // More ranks than cores: ranks take turns on the cores, so the measurement carries the scheduler's
  // delays (the emulated GPUs pay most of them back, not all). Said, not refused: a 2-core host is
  // still a host to validate on, with --repeats to see the noise. Only for this host (no hostfile).
  if (const unsigned cores = std::thread::hardware_concurrency(); o.hostfile.empty() && cores > 0 && o.ranks > cores)
    log << "exasim: warning: " << o.ranks << " ranks on " << cores
        << " cores: the ranks share cores (oversubscribed), so measured times are noisier and later than with a "
           "core per rank\n";
  Launch l;
  l.ranks = o.ranks;
  l.emu_args = {scenario_path, "--out", o.out_dir};
  for (const auto& set : o.overrides) l.emu_args.insert(l.emu_args.end(), {"--set", set});
  auto args = o.emu.to_args();
  l.emu_args.insert(l.emu_args.end(), args.begin(), args.end());
  l.emu_args.insert(l.emu_args.end(), o.extra_emu_args.begin(), o.extra_emu_args.end());
  l.hostfile = o.hostfile;
  l.timeout_s = o.timeout_s;
  l.stdout_to_stderr = o.stdout_to_stderr;
  return launch(l, log);
}

namespace {

/// The calibration's emulated_kernel_overhead_s (0 in a file without it); at most 10 ms, a unit mistake beyond.
double emulated_kernel_overhead_s(const nlohmann::json& machine, const std::string& file) {
  const auto sources = machine.value("sources", nlohmann::json::object());
  const auto it = sources.find("emulated_kernel_overhead_s");
  if (it == sources.end()) return 0;
  if (!it->is_number() || !(it->get<double>() >= 0) || it->get<double>() > 0.01)
    throw InputError(file, "sources.emulated_kernel_overhead_s", "must be a number of seconds in [0, 0.01]");
  return it->get<double>();
}

}  // namespace

std::map<std::string, double> simulate_on_host(const std::string& scenario_path,
                                               const std::vector<std::string>& overrides,
                                               const std::string& machine_file, const emu::EmulationOptions& emu,
                                               double& iteration_s) {
  auto machine = read_json_file(machine_file);
  JsonView view(machine, machine_file, "");
  // A bad machine file is named as such: its network too, which only building it checks.
  (void)scenario::build_topology(scenario::load_machine_spec(view), 0);
  auto doc = scenario::load_scenario(scenario_path, overrides).resolved;
  // The scenario's node size stays: hierarchical collectives split groups by node (calibration_fit.hpp).
  machine = machine_with_node_size(machine, doc["machine"]["node"]["gpus"].get<std::uint32_t>());
  for (const char* key : {"node", "network", "collectives"}) {
    if (machine.contains(key))
      doc["machine"][key] = machine[key];
    else
      doc["machine"].erase(key);
  }
  auto s = scenario::parse_scenario(doc, scenario_path);
  // The host is MPI processes with emulated GPUs: no NCCL, whose choice the emulation runs as its ring,
  // and no GPU for communication to slow.
  if (s.collective_algorithm == collectives::Algorithm::Nccl) s.collective_algorithm = collectives::Algorithm::Ring;
  s.overlap.interference = false;
  api::SimulateOptions options;
  options.check_memory = false;
  // An emulated op costs a little more than its modelled time (calibrate's kernel points): a GPU's
  // launch overhead, of this host's emulated GPU. Measured in sleep mode, charged only there.
  const double kernel_overhead_s =
      emu.compute == emu::ComputeMode::Sleep ? emulated_kernel_overhead_s(machine, machine_file) : 0.0;
  options.adjust_job = [&](scenario::PreparedJob& job) {
    emu::apply_emulation_scales(job, emu);
    for (double& t : job.job.kernel_time_s) t += kernel_overhead_s;
  };
  options.traced_ranks.assign(s.gpus, true);
  std::map<std::string, double> classes;
  options.on_trace = [&](const scenario::PreparedJob& job, std::vector<trace::TraceRow> traced) {
    classes = trace::op_class_times(traced, report::group_of(job.plan));
  };
  iteration_s = api::simulate(s, options).iteration_time_s;
  return classes;
}

namespace {

/// A short probe: one quick run of the same microbenchmarks, fitted as the calibration was; its bandwidth
/// and step latency against `bandwidth_Bps` and `latency_s`, in %.
std::pair<double, double> probe_drift(const std::string& path, const CalibrateOptions& o, double bandwidth_Bps,
                                      double latency_s, std::ostream& log) {
  CalibrateOptions probe = o;
  probe.quick = true;
  const auto run = run_microbench(probe, path + ".probe.json", log);
  std::error_code ec;
  fs::remove(path + ".probe.json", ec);
  return {100 * (run.fit.collectives.bandwidth_Bps / bandwidth_Bps - 1),
          100 * (run.fit.collectives.latency_s / latency_s - 1)};
}

/// The fit a calibration file records (sources.conditions); zeros in a file without it.
std::pair<double, double> recorded_fit(const nlohmann::json& machine) {
  const auto then = machine.value("sources", nlohmann::json::object()).value("conditions", nlohmann::json::object());
  return {then.value("collectives_bandwidth_Bps", 0.0), then.value("collectives_latency_s", 0.0)};
}

}  // namespace

nlohmann::json scaled_machine(nlohmann::json machine, double bandwidth_ratio, double latency_ratio) {
  auto& node = machine.at("node");
  node["nic_bandwidth_Bps"] = node.at("nic_bandwidth_Bps").get<double>() * bandwidth_ratio;
  node["nic_latency_s"] = node.at("nic_latency_s").get<double>() * latency_ratio;
  if (machine.contains("collectives")) {
    auto& coll = machine["collectives"];
    if (coll.contains("step_overhead_s"))
      coll["step_overhead_s"] = coll["step_overhead_s"].get<double>() * latency_ratio;
    if (coll.contains("step_costs"))
      for (auto& row : coll["step_costs"])
        row["step_overhead_s"] = row.at("step_overhead_s").get<double>() * latency_ratio;
  }
  return machine;
}

std::string disturbed_calibration(const nlohmann::json& machine) {
  // `sources` is free-form documentation in a hand-written machine file: read only what calibrate writes,
  // and only where it has the shape calibrate gives it.
  if (!machine.is_object() || !machine.contains("sources") || !machine["sources"].is_object()) return {};
  const auto& sources = machine["sources"];
  double most = -1;
  if (const auto it = sources.find("calibration_steal_pct"); it != sources.end() && it->is_array())
    for (const auto& pct : *it)
      if (pct.is_number()) most = std::max(most, pct.get<double>());
  char text[160];
  if (const auto it = sources.find("calibration_disturbed"); it != sources.end() && it->is_boolean()) {
    // calibrate's own judgement, under its --max-steal-pct
    if (!it->get<bool>()) return {};
    std::snprintf(text, sizeof text,
                  "the hypervisor disturbed every run it fitted, taking up to %.1f%% of the CPU time", most);
    return text;
  }
  if (most > kDisturbedStealPct) {  // an older file, which pooled every kept run
    std::snprintf(text, sizeof text, "a run it fitted lost %.1f%% of the CPU time to the hypervisor (bound %.0f%%)",
                  most, kDisturbedStealPct);
    return text;
  }
  return {};
}

CalibrationCheck check_calibration(const std::string& path, const CalibrateOptions& o, double max_drift_pct,
                                   std::ostream& log) {
  CalibrationCheck c;
  const auto cached = read_json_file(path);
  const auto then = cached.value("sources", nlohmann::json::object()).value("conditions", nlohmann::json::object());
  const auto [cached_bw, cached_lat] = recorded_fit(cached);
  if (!(cached_bw > 0) || !(cached_lat > 0)) {
    c.reason = "it records no conditions or fit (an older file)";
    return c;
  }
  if (then.value("cores", 0u) != std::thread::hardware_concurrency()) {
    c.reason = "it was taken on " + std::to_string(then.value("cores", 0u)) + " cores, this host has " +
               std::to_string(std::thread::hardware_concurrency());
    return c;
  }
  // A disturbed calibration prices every collective at the hypervisor's hour; a probe within the drift
  // bound of a fit pooled from quiet and disturbed runs would not see it. No probe is needed to say so.
  if (c.reason = disturbed_calibration(cached); !c.reason.empty()) return c;
  // A quick probe is noisy (on a quiet 2-core host one in four or five lands beyond 25%): a probe beyond the
  // bound is checked by a second one, and the calibration is stale only when both are beyond it.
  auto worst = [](std::pair<double, double> d) { return std::max(std::abs(d.first), std::abs(d.second)); };
  auto drift = probe_drift(path, o, cached_bw, cached_lat, log);
  std::string first;
  if (worst(drift) > max_drift_pct) {
    char text[96];
    std::snprintf(text, sizeof text, "; a first probe: %+.0f%%, %+.0f%%", drift.first, drift.second);
    first = text;
    const auto second = probe_drift(path, o, cached_bw, cached_lat, log);
    if (worst(second) < worst(drift)) drift = second;
  }
  c.bandwidth_drift_pct = drift.first;
  c.latency_drift_pct = drift.second;
  c.fresh = worst(drift) <= max_drift_pct;
  char line[200];
  std::snprintf(line, sizeof line,
                "a probe measured bandwidth %+.0f%%, step latency %+.0f%% against it (bound %.0f%%%s)",
                c.bandwidth_drift_pct, c.latency_drift_pct, max_drift_pct, first.c_str());
  c.reason = line;
  return c;
}

ValidationResult validate_scenario(const std::string& scenario_path, const ValidateOptions& o, std::ostream& log) {
  emu::validate_options(o.emu);
  auto s = checked_scenario(scenario_path, o.overrides, o.ranks);
  if (o.repeats < 1 || o.repeats > 100)
    throw InputError("--repeats", std::to_string(o.repeats), "1 to 100 emulations (5 by default)");
  if (!(o.max_steal_pct >= 0 && o.max_steal_pct <= 100))  // NaN compares false
    throw InputError("--max-steal-pct", std::to_string(o.max_steal_pct),
                     "a percentage of the CPU time from 0 to 100 (100: keep every emulation)");
  std::string calibration = o.calibration.empty() ? default_calibration_path(o.ranks) : o.calibration;
  if (!o.calibration.empty() && !fs::exists(calibration))
    throw InputError("--calibration", calibration, "no such file");
  if (!o.out_dir.empty()) {
    // Before calibrating: a paired repeat writes its probed machine there before the first emulation.
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
    if (ec || !fs::is_directory(o.out_dir))
      throw InputError("--out", o.out_dir, "cannot create this directory" + (ec ? ": " + ec.message() : std::string()));
  }
  CalibrateOptions c;
  c.ranks = o.ranks;
  c.out = calibration;
  c.quick = o.quick_calibration;
  c.repeats = o.calibration_repeats;
  c.max_steal_pct = o.max_steal_pct;
  c.poll_interval_s = o.emu.poll_interval_s;
  std::string status;
  bool measure = true;
  if (!o.calibration.empty() && !o.recalibrate) {
    status = "given (--calibration), used as it is";
    measure = false;
  } else if (o.recalibrate) {
    status = "measured now (--recalibrate)";
  } else if (!fs::exists(calibration)) {
    status = "measured now (none cached)";
  } else {
    // A cached calibration describes the host as it was: taken while the host was busy it prices every
    // collective too slow, and every later validation inherits that. A short probe decides.
    const auto check = check_calibration(calibration, c, kCalibrationDriftPct, log);
    status = check.fresh ? "cached, reused: " + check.reason : "cached but stale, measured again: " + check.reason;
    log << "exasim: calibration " << calibration << ": " << status << "\n";
    measure = !check.fresh;
  }
  if (measure) calibration = calibrate(c, log);

  const fs::path out = o.out_dir.empty() ? temp_out_dir() : fs::path(o.out_dir);
  EmulateOptions e;
  e.ranks = o.ranks;
  e.out_dir = out.string();
  e.overrides = o.overrides;
  e.emu = o.emu;
  e.emu.timeout_s = o.timeout_s;
  e.timeout_s = 2 * o.timeout_s;
  e.stdout_to_stderr = true;

  ValidationResult r;
  r.scenario = s.name;
  r.calibration = calibration;
  r.calibration_status = status;
  // What one emulation (and, paired, its probed simulation) gave; the kept ones make the result.
  struct Repeat {
    double measured_s = 0, simulated_s = 0, bandwidth_drift_pct = 0;
    std::vector<double> iterations_s;
    std::vector<std::map<std::string, double>> classes;  ///< one per measured iteration
    std::map<std::string, double> simulated_classes;
  };
  std::vector<Repeat> repeats;
  const auto calibrated_machine = read_json_file(calibration);
  r.calibration_disturbed = disturbed_calibration(calibrated_machine);
  const auto [calibrated_bw, calibrated_lat] = recorded_fit(calibrated_machine);
  bool paired = o.paired || o.require_paired;
  if (paired && !(calibrated_bw > 0 && calibrated_lat > 0)) {
    if (o.require_paired)
      throw InputError(calibration, "sources.conditions",
                       "--paired needs the fit a calibration records (calibrate again with this exasim)");
    log << "exasim: " << calibration << " records no fit to scale to a probe: one simulation, unpaired\n";
    paired = false;
  }
  // Run again, up to `repeats` times, while fewer than `repeats` emulations were left alone by the hypervisor.
  const QuietRuns quiet = run_until_quiet(o.repeats, o.max_steal_pct, [&] {
    Repeat& x = repeats.emplace_back();
    if (paired) {
      // Probe, then measure at once: both sides of this repeat's error see the host as it is now.
      const auto [bw_drift, lat_drift] = probe_drift(calibration, c, calibrated_bw, calibrated_lat, log);
      const auto file = (out / "machine-probed.json").string();
      const auto probed = scaled_machine(calibrated_machine, 1 + bw_drift / 100, 1 + lat_drift / 100);
      emu::publish_file(file, [&](std::ostream& f) { f << probed.dump(2) << '\n'; });
      x.simulated_classes = simulate_on_host(scenario_path, o.overrides, file, o.emu, x.simulated_s);
      x.bandwidth_drift_pct = bw_drift;
    }
    fs::remove(out / "summary.json");  // its presence afterwards means this emulation completed
    const auto cpu_before = read_cpu_counters();
    if (emulate(scenario_path, e, log) != 0)
      throw InputError(scenario_path, "", "exasim-emu rejected the scenario (its message is above)");
    const double stolen = steal_pct(cpu_before, read_cpu_counters());
    if (!fs::exists(out / "summary.json"))
      throw EmulationFailed("exasim-emu ended without writing " + (out / "summary.json").string());
    auto summary = read_json_file((out / "summary.json").string());
    x.measured_s = summary.at("iteration_time_s").get<double>();
    x.iterations_s = summary.at("measured_iterations_s").get<std::vector<double>>();
    // Every measured iteration's classes where the emulator wrote them (by default 3 per emulation, so a
    // class's median is over 15 samples rather than 5); else the reported iteration's, from its trace.
    const auto per_iteration = summary.value("measured_op_classes", nlohmann::json::array());
    if (per_iteration.empty())
      x.classes.push_back(trace::op_class_times(trace::read_csv((out / "trace.csv").string())));
    for (const auto& classes : per_iteration) x.classes.push_back(classes.get<std::map<std::string, double>>());
    return stolen;
  });
  if (!o.out_dir.empty() && !quiet.kept.empty() && !quiet.kept.back()) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "exasim: the files in %s are the last emulation's, which was not kept (%.1f%% of the CPU time "
                  "stolen)\n",
                  o.out_dir.c_str(), quiet.steal_pct.back());
    log << line;
  }
  // Op class seconds, one map per sample: measured, one per measured iteration of every kept emulation;
  // simulated (paired), one per kept repeat.
  std::vector<std::map<std::string, double>> class_samples, simulated_class_samples;
  r.max_steal_pct = o.max_steal_pct;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    Repeat& x = repeats[i];
    if (!quiet.kept[i]) {
      r.dropped_steal_pct.push_back(quiet.steal_pct[i]);
      continue;
    }
    r.measured_runs_s.push_back(x.measured_s);
    r.measured_iterations_s = x.iterations_s;
    r.steal_pct.push_back(quiet.steal_pct[i]);
    class_samples.insert(class_samples.end(), x.classes.begin(), x.classes.end());
    if (paired) {
      r.simulated_runs_s.push_back(x.simulated_s);
      r.probe_bandwidth_drift_pct.push_back(x.bandwidth_drift_pct);
      simulated_class_samples.push_back(std::move(x.simulated_classes));
    }
  }
  const Spread measured = spread_of(r.measured_runs_s);
  r.measured_iteration_s = measured.median;
  r.measured_min_s = measured.min;
  r.measured_max_s = measured.max;
  r.measured_spread_pct = measured.spread_pct;

  const auto measured_classes = class_medians(class_samples);
  r.measured_class_samples = class_samples.size();
  if (paired) {
    // The simulated side from the probed simulations: the pairs' mean error, the median simulated time, and per
    // class the median over them, as the measured side is over the emulations they were paired with.
    r.interval = paired_error_interval(r.measured_runs_s, r.simulated_runs_s);
    r.error_pct = r.interval.mean_pct;
    r.simulated_iteration_s = spread_of(r.simulated_runs_s).median;
    r.classes = compare_class_times(measured_classes, class_medians(simulated_class_samples));
  } else {
    const auto simulated_classes =
        simulate_on_host(scenario_path, o.overrides, calibration, o.emu, r.simulated_iteration_s);
    r.error_pct = error_pct(r.measured_iteration_s, r.simulated_iteration_s);
    r.interval = error_interval(r.measured_runs_s, r.simulated_iteration_s);
    r.classes = compare_class_times(measured_classes, simulated_classes);
  }
  r.simulated_inside_spread =
      r.measured_min_s <= r.simulated_iteration_s && r.simulated_iteration_s <= r.measured_max_s;
  if (o.out_dir.empty()) fs::remove_all(out);
  return r;
}

Spread spread_of(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  Spread s;
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.min = samples.front();
  s.max = samples.back();
  s.spread_pct = s.median > 0 ? 100 * (s.max - s.min) / s.median : 0;
  return s;
}

std::map<std::string, double> class_medians(const std::vector<std::map<std::string, double>>& samples) {
  std::map<std::string, std::vector<double>> by_class;
  for (const auto& sample : samples)
    for (const auto& [name, seconds] : sample) by_class[name];
  for (auto& [name, values] : by_class)
    for (const auto& sample : samples) {
      const auto it = sample.find(name);
      values.push_back(it == sample.end() ? 0.0 : it->second);
    }
  std::map<std::string, double> medians;
  for (const auto& [name, values] : by_class) medians[name] = spread_of(values).median;
  return medians;
}

nlohmann::ordered_json to_json(const ValidationResult& r) {
  nlohmann::ordered_json classes = nlohmann::ordered_json::object();
  for (const auto& c : r.classes)
    classes[c.op_class] = {{"measured_s", c.measured_s}, {"simulated_s", c.simulated_s}, {"error_pct", c.error_pct}};
  return {{"scenario", r.scenario},
          {"measured_iteration_s", r.measured_iteration_s},
          {"measured_spread_pct", r.measured_spread_pct},
          {"measured_min_s", r.measured_min_s},
          {"measured_max_s", r.measured_max_s},
          {"measured_runs_s", r.measured_runs_s},
          {"simulated_iteration_s", r.simulated_iteration_s},
          {"error_pct", r.error_pct},
          {"simulated_inside_spread", r.simulated_inside_spread},
          {"error_interval",
           {{"mean_pct", r.interval.mean_pct},
            {"low_pct", r.interval.low_pct},
            {"high_pct", r.interval.high_pct},
            {"stddev_pct", r.interval.stddev_pct},
            {"repeats", r.interval.samples}}},
          {"paired", !r.simulated_runs_s.empty()},
          {"simulated_runs_s", r.simulated_runs_s},
          {"probe_bandwidth_drift_pct", r.probe_bandwidth_drift_pct},
          {"steal_pct", r.steal_pct},
          {"max_steal_pct", r.max_steal_pct},
          {"dropped_steal_pct", r.dropped_steal_pct},
          {"disturbed_emulations", r.disturbed_kept()},
          {"calibration_disturbed", !r.calibration_disturbed.empty()},
          {"measured_iterations_s", r.measured_iterations_s},
          {"op_classes", classes},
          {"measured_class_samples", r.measured_class_samples},
          {"calibration", r.calibration},
          {"calibration_status", r.calibration_status}};
}

void print(std::ostream& out, const ValidationResult& r) {
  char line[256];
  out << "exasim validate: " << r.scenario << "\n";
  std::snprintf(line, sizeof line, "  iteration   measured %9.4f s   simulated %9.4f s   error %+6.1f%%\n",
                r.measured_iteration_s, r.simulated_iteration_s, r.error_pct);
  out << line;
  std::snprintf(line, sizeof line,
                "  measured    median of %zu emulations, min %.4f s, max %.4f s, spread %.1f%%: %s\n",
                r.measured_runs_s.size(), r.measured_min_s, r.measured_max_s, r.measured_spread_pct,
                r.simulated_inside_spread ? "the simulated time is inside it" : "the simulated time is outside it");
  out << line;
  if (r.interval.samples >= 2)
    std::snprintf(line, sizeof line,
                  "  error       %+.1f%% mean over the %u emulations, 95%% interval [%+.1f%%, %+.1f%%]\n",
                  r.interval.mean_pct, r.interval.samples, r.interval.low_pct, r.interval.high_pct);
  else
    std::snprintf(line, sizeof line, "  error       one emulation: no interval (--repeats 3 or more gives one)\n");
  out << line;
  if (!r.simulated_runs_s.empty()) {
    const Spread drift = spread_of(r.probe_bandwidth_drift_pct);
    std::snprintf(line, sizeof line,
                  "  paired      each emulation against a simulation of the host probed just before it (probe "
                  "bandwidth %+.0f%% to %+.0f%% of the calibration)\n",
                  drift.min, drift.max);
    out << line;
  }
  if (!r.dropped_steal_pct.empty()) {
    std::snprintf(line, sizeof line,
                  "  host        the hypervisor took more than %.0f%% of the CPU time during some emulations: %zu "
                  "more ran, the %zu least disturbed are kept; dropped, the CPU time taken:",
                  r.max_steal_pct, r.dropped_steal_pct.size(), r.measured_runs_s.size());
    out << line;
    for (double pct : r.dropped_steal_pct) {
      std::snprintf(line, sizeof line, " %.1f%%", pct);
      out << line;
    }
    out << "\n";
  }
  // A virtual machine's hypervisor can take the cores in bursts that no probe sees: say when it did.
  const auto most_stolen = std::max_element(r.steal_pct.begin(), r.steal_pct.end());
  if (const std::size_t disturbed = r.disturbed_kept(); disturbed > 0) {
    std::snprintf(line, sizeof line,
                  "  host        %zu of the %zu emulations kept still lost more than %.0f%% of the CPU time to the "
                  "hypervisor (up to %.1f%%): too disturbed to judge the model; validate again on a quieter hour\n",
                  disturbed, r.steal_pct.size(), r.disturbed_bound_pct(), *most_stolen);
    out << line;
  } else if (most_stolen != r.steal_pct.end() && *most_stolen >= kDisturbedStealPct) {
    std::snprintf(line, sizeof line,
                  "  host        the hypervisor took %.1f%% of the CPU time during emulation %td (of %zu): that "
                  "emulation ran slow for reasons outside this host\n",
                  *most_stolen, most_stolen - r.steal_pct.begin() + 1, r.steal_pct.size());
    out << line;
  }
  if (!r.calibration_disturbed.empty())
    out << "  host        the calibration was measured on a disturbed host (" << r.calibration_disturbed
        << "): too disturbed to judge the model; validate again on a quieter hour\n";
  std::snprintf(line, sizeof line,
                "\n  per op class (mean over ranks of summed durations; measured: median over %zu measured "
                "iterations%s):\n",
                r.measured_class_samples,
                r.simulated_runs_s.empty() ? "" : ",\n  simulated: over the probed simulations");
  out << line;
  std::snprintf(line, sizeof line, "    %-22s %12s %12s %8s\n", "class", "measured s", "simulated s", "error");
  out << line;
  for (const auto& c : r.classes) {
    std::snprintf(line, sizeof line, "    %-22s %12.5f %12.5f %+7.1f%%\n", c.op_class.c_str(), c.measured_s,
                  c.simulated_s, c.error_pct);
    out << line;
  }
  out << "  (collective classes run from post to completion and overlap compute; post_skew is the part of\n"
         "   them members had posted before their group's last post, a diagnostic, not an op's time;\n"
         "   exposed_comm is the time blocked in waits; calibration: "
      << r.calibration << ",\n   " << r.calibration_status << ")\n";
}

}  // namespace exasim::validate
