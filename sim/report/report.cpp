#include "sim/report/report.hpp"

#include "sim/schedule/flops.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace exasim::report {

nlohmann::ordered_json summary_json(const scenario::Scenario& s, const schedule::Plan& plan, const runtime::RunResult& r) {
  using json = nlohmann::ordered_json;
  const double G = s.gpus;
  const double model_flops = schedule::model_flops(s.model, s.training.global_batch);
  const double hw_flops = schedule::hardware_flops(s.model, s.training.global_batch, s.training.recompute);
  const double t = r.iteration_s;
  const double peak = s.machine.gpu.peak_bf16_flops;

  // Mean over ranks of where the iteration went.
  const auto& dims = plan.grid.dims();
  double compute = 0, idle = 0;
  std::vector<double> exposed(dims.size(), 0.0);
  for (const auto& rank : r.ranks) {
    compute += rank.compute_s;
    idle += t - rank.finish_s;
    for (std::size_t d = 0; d < dims.size(); ++d) exposed[d] += rank.exposed_s[d];
  }
  const double n = std::max<double>(1, static_cast<double>(r.ranks.size()));
  json exposed_json = json::object(), bytes_json = json::object(), count_json = json::object();
  for (std::size_t d = 0; d < dims.size(); ++d) {
    exposed_json[dims[d].name] = exposed[d] / n;
    bytes_json[dims[d].name] = r.rank0_wire_bytes[d];
    count_json[dims[d].name] = r.rank0_collectives[d];
  }
  json parallel = {{"scheme", plan.scheme}};
  if (s.scheme == "megatron") {
    const auto& m = s.megatron;
    parallel.update({{"tp", m.tp}, {"pp", m.pp}, {"dp", m.dp}, {"zero", m.zero}, {"micro_batch", m.micro_batch},
                     {"virtual_stages", m.virtual_stages}, {"sequence_parallel", m.sequence_parallel},
                     {"scatter_gather", m.scatter_gather}});
  } else {
    for (const auto& d : dims) parallel["g" + d.name] = d.size;
  }

  const auto memory = scenario::memory_per_gpu(s);
  return json{
      {"scenario", s.name},
      {"backend", r.backend},
      {"machine", s.machine.name},
      {"gpu", s.machine.gpu.name},
      {"model", s.model.name},
      {"parameters", s.model.parameters()},
      {"gpus", s.gpus},
      {"network", s.machine.topology_kind()},
      {"routing", s.machine.network.value("routing", std::string("minimal"))},
      {"placement", scenario::to_string(s.placement.policy)},
      {"parallel", parallel},
      {"global_batch", s.training.global_batch},
      {"training", {{"recompute", schedule::to_string(s.training.recompute)},
                    {"attention", schedule::to_string(s.training.attention)},
                    {"dropout", s.training.dropout},
                    {"dtype", gpu::to_string(s.training.dtype)}}},
      {"iteration_time_s", t},
      {"model_flops", model_flops},
      {"hardware_flops", hw_flops},
      {"tflops_per_gpu", hw_flops / (t * G) / 1e12},
      {"model_tflops_per_gpu", model_flops / (t * G) / 1e12},
      {"peak_tflops_per_gpu", peak / 1e12},
      {"percent_of_peak", 100 * hw_flops / (t * G * peak)},
      {"mfu_percent", 100 * model_flops / (t * G * peak)},
      {"total_pflops", hw_flops / t / 1e15},
      {"breakdown_s", {{"compute", compute / n}, {"exposed_comm", exposed_json}, {"idle", idle / n}}},
      {"memory_per_gpu_bytes", memory.total()},
      {"memory_breakdown_bytes", {{"weights", memory.weights}, {"gradients", memory.gradients},
                                  {"optimizer", memory.optimizer}, {"activations", memory.activations},
                                  {"workspace", memory.workspace}}},
      {"memory_capacity_bytes", s.machine.gpu_choice.device.hbm_capacity_bytes.value},
      {"comm_bytes_per_rank", bytes_json},
      {"collectives_per_rank", count_json},
      {"events", r.events},
      {"flows", r.flows},
      {"seed", s.seed},
  };
}

namespace {
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
std::string human_bytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000 && u < 5) {
    b /= 1000;
    ++u;
  }
  return fixed(b, u == 0 ? 0 : 2) + " " + units[u];
}
}  // namespace

void print_summary(std::ostream& out, const nlohmann::ordered_json& j) {
  const double t = j["iteration_time_s"].get<double>();
  const auto& p = j["parallel"];
  out << "exasim simulate: " << j["scenario"].get<std::string>() << "\n"
      << "  " << j["model"].get<std::string>() << " (" << fixed(j["parameters"].get<double>() / 1e9, 1)
      << "B parameters) on " << j["gpus"].get<std::uint64_t>() << " x " << j["gpu"].get<std::string>() << " ("
      << j["machine"].get<std::string>() << "), " << p["scheme"].get<std::string>();
  for (const auto& [key, value] : p.items())
    if (key != "scheme") out << " " << key << "=" << (value.is_boolean() ? (value.get<bool>() ? "on" : "off") : value.dump());
  const auto& tr = j["training"];
  out << ", global batch " << j["global_batch"].get<std::int64_t>() << "\n"
      << "  " << tr["dtype"].get<std::string>() << ", " << tr["attention"].get<std::string>() << " attention, dropout "
      << tr["dropout"].get<double>() << ", recompute " << tr["recompute"].get<std::string>() << "\n"
      << "  network " << j["network"].get<std::string>() << ", routing " << j["routing"].get<std::string>()
      << ", placement " << j["placement"].get<std::string>() << "\n\n"
      << "  iteration time   " << fixed(t, 4) << " s\n"
      << "  throughput       " << fixed(j["tflops_per_gpu"].get<double>(), 1) << " TFLOP/s per GPU, "
      << fixed(j["percent_of_peak"].get<double>(), 1) << "% of the " << fixed(j["peak_tflops_per_gpu"].get<double>(), 1)
      << " TFLOP/s peak; " << fixed(j["total_pflops"].get<double>(), 2) << " PFLOP/s in total\n"
      << "                   (hardware flops, recomputation included; model flops give "
      << fixed(j["model_tflops_per_gpu"].get<double>(), 1) << " TFLOP/s, MFU " << fixed(j["mfu_percent"].get<double>(), 1)
      << "%)\n\n"
      << "  where the time goes (mean over ranks):\n";
  auto line = [&](const std::string& label, double seconds) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "    %-22s %10.4f s  %5.1f%%\n", label.c_str(), seconds, t > 0 ? 100 * seconds / t : 0);
    out << buf;
  };
  const auto& b = j["breakdown_s"];
  line("compute", b["compute"].get<double>());
  for (const auto& [dim, seconds] : b["exposed_comm"].items()) line("exposed comm " + dim, seconds.get<double>());
  line("idle (waiting to end)", b["idle"].get<double>());
  if (j.contains("compute_by_kernel_s")) {
    out << "\n  compute by kernel class (mean over stages, recomputation included):\n";
    for (const auto& [kind, seconds] : j["compute_by_kernel_s"].items()) line(kind, seconds.get<double>());
  }
  out << "\n  memory per GPU     " << fixed(j["memory_per_gpu_bytes"].get<double>() / 1e9, 1) << " GB of "
      << fixed(j["memory_capacity_bytes"].get<double>() / 1e9, 1) << " GB (";
  bool first = true;
  for (const auto& [part, bytes] : j["memory_breakdown_bytes"].items()) {
    out << (first ? "" : ", ") << part << " " << fixed(bytes.get<double>() / 1e9, 1);
    first = false;
  }
  out << ")\n";
  out << "\n  communication of rank 0 (bytes on the wire, ring algorithms):\n";
  for (const auto& [dim, bytes] : j["comm_bytes_per_rank"].items()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "    %-6s %12s in %6llu collectives\n", dim.c_str(), human_bytes(bytes.get<double>()).c_str(),
                  static_cast<unsigned long long>(j["collectives_per_rank"][dim].get<std::uint64_t>()));
    out << buf;
  }
  out << "\n  simulated " << j["events"].get<std::uint64_t>() << " events and " << j["flows"].get<std::uint64_t>()
      << " flows (" << j["backend"].get<std::string>() << " backend)\n";
}

runtime::OpObserver TraceCollector::observer() {
  return [this](runtime::Rank rank, std::uint32_t op, double t0, double t1) { records_.push_back({rank, op, t0, t1}); };
}

std::vector<trace::TraceRow> TraceCollector::rows() const {
  auto sorted = records_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Record& a, const Record& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.t0 != b.t0) return a.t0 < b.t0;
    return a.op < b.op;
  });
  std::vector<trace::TraceRow> rows;
  rows.reserve(sorted.size());
  for (const auto& rec : sorted) {
    const auto& op = plan_.stream_of(rec.rank).ops[rec.op];
    trace::TraceRow row;
    row.rank = rec.rank;
    row.op = plan_.names[op.name];
    row.t_start_s = rec.t0;
    row.t_end_s = rec.t1;
    switch (op.type) {
      case schedule::OpType::Compute: {
        const auto& k = plan_.kernels[op.kernel];
        row.kind = std::string(gpu::to_string(k.kind));
        row.bytes = k.bytes;
        row.flops = k.flops;
        break;
      }
      case schedule::OpType::CollStart:
        row.kind = std::string(schedule::to_string(op.coll));
        row.dim = plan_.grid.dim(op.dim).name;
        row.bytes = op.bytes;
        break;
      case schedule::OpType::Wait:
        row.kind = "wait";
        row.dim = plan_.grid.dim(op.dim).name;
        row.bytes = op.bytes;
        break;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace exasim::report
