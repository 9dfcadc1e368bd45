// `exasim presets [--json]`: what ships with exasim, with the figures a user picks by: each machine's
// size, device and network; each model's parameters and shape; each GPU's peaks and memory. Every
// figure is read from the preset files and the device table, not restated here.

#include "sim/cli/command.hpp"
#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/gpu/devices.hpp"
#include "sim/scenario/machine.hpp"
#include "sim/schedule/model.hpp"
#include "topologies/summary.hpp"
#include "topologies/topology.hpp"

#include <cstdio>
#include <ostream>

namespace exasim::cli {

namespace {

nlohmann::json machine_row(const std::string& name) {
  const auto path = find_preset("topologies/presets", name).string();
  const auto doc = read_json_file(path);
  const auto machine = scenario::load_machine_spec(JsonView(doc, path, ""));
  const auto summary = scenario::build_topology(machine, 0)->summary();
  return {{"name", name},
          {"gpu", machine.gpu_choice.device.name},
          {"nodes", summary.nodes},
          {"gpus", summary.gpus},
          {"gpus_per_node", summary.gpus_per_node},
          {"topology", machine.topology_kind()},
          {"injection_bandwidth_Bps", summary.injection_bandwidth_Bps},
          {"taper", summary.taper}};
}

nlohmann::json model_row(const std::string& name) {
  const auto path = find_preset("configs/models", name).string();
  const auto doc = read_json_file(path);
  const auto model = schedule::load_model_spec(JsonView(doc, path, ""));
  nlohmann::json row = {
      {"name", name},           {"parameters", model.parameters()}, {"active_parameters", model.active_parameters()},
      {"layers", model.layers}, {"hidden", model.hidden},           {"seq_len", model.seq_len}};
  if (model.moe.experts > 0) {
    row["experts"] = model.moe.experts;
    row["top_k"] = model.moe.top_k;
  }
  return row;
}

nlohmann::json gpu_row(const std::string& name) {
  const auto& d = gpu::require_device(name, "the device table", "gpu");
  return {{"name", name},
          {"description", d.description},
          {"peak_bf16_flops", d.peak_bf16_flops.value},
          {"peak_fp8_flops", d.peak_fp8_flops.value},
          {"hbm_capacity_bytes", d.hbm_capacity_bytes.value},
          {"hbm_bandwidth_Bps", d.hbm_bandwidth_Bps.value}};
}

nlohmann::json all_presets() {
  nlohmann::json j = {
      {"machines", nlohmann::json::array()}, {"models", nlohmann::json::array()}, {"gpus", nlohmann::json::array()}};
  for (const auto& n : preset_names("topologies/presets")) j["machines"].push_back(machine_row(n));
  for (const auto& n : preset_names("configs/models")) j["models"].push_back(model_row(n));
  for (const auto& n : gpu::device_names()) j["gpus"].push_back(gpu_row(n));
  return j;
}

void print_presets(std::ostream& out, const nlohmann::json& j) {
  char line[256];
  out << "machines (topologies/presets; exasim topo NAME for the network):\n";
  std::snprintf(line, sizeof line, "  %-18s %-12s %7s %7s %9s  %s\n", "name", "gpu", "nodes", "GPUs", "per_node",
                "network");
  out << line;
  for (const auto& m : j["machines"]) {
    std::snprintf(line, sizeof line, "  %-18s %-12s %7llu %7llu %9llu  %s\n", m["name"].get<std::string>().c_str(),
                  m["gpu"].get<std::string>().c_str(), m["nodes"].get<unsigned long long>(),
                  m["gpus"].get<unsigned long long>(), m["gpus_per_node"].get<unsigned long long>(),
                  m["topology"].get<std::string>().c_str());
    out << line;
  }
  out << "\nmodels (configs/models; parameters in billions, active: what one token uses):\n";
  std::snprintf(line, sizeof line, "  %-16s %9s %9s %7s %7s %7s  %s\n", "name", "params_B", "active_B", "layers",
                "hidden", "seq", "experts");
  out << line;
  for (const auto& m : j["models"]) {
    const std::string experts = m.contains("experts") ? std::to_string(m["experts"].get<long long>()) + " (top " +
                                                            std::to_string(m["top_k"].get<long long>()) + ")"
                                                      : "-";
    std::snprintf(line, sizeof line, "  %-16s %9.1f %9.1f %7lld %7lld %7lld  %s\n",
                  m["name"].get<std::string>().c_str(), m["parameters"].get<double>() / 1e9,
                  m["active_parameters"].get<double>() / 1e9, m["layers"].get<long long>(),
                  m["hidden"].get<long long>(), m["seq_len"].get<long long>(), experts.c_str());
    out << line;
  }
  out << "\ngpus (roofline --gpu; dense peaks, per GCD for MI250X):\n";
  std::snprintf(line, sizeof line, "  %-14s %10s %10s %8s %9s  %s\n", "name", "bf16_TF/s", "fp8_TF/s", "HBM_GB",
                "HBM_TB/s", "part");
  out << line;
  for (const auto& g : j["gpus"]) {
    const double fp8 = g["peak_fp8_flops"].get<double>();
    char fp8_cell[32];
    if (fp8 > 0)
      std::snprintf(fp8_cell, sizeof fp8_cell, "%.0f", fp8 / 1e12);
    else
      std::snprintf(fp8_cell, sizeof fp8_cell, "-");
    std::snprintf(line, sizeof line, "  %-14s %10.0f %10s %8.0f %9.2f  %s\n", g["name"].get<std::string>().c_str(),
                  g["peak_bf16_flops"].get<double>() / 1e12, fp8_cell, g["hbm_capacity_bytes"].get<double>() / 1e9,
                  g["hbm_bandwidth_Bps"].get<double>() / 1e12, g["description"].get<std::string>().c_str());
    out << line;
  }
}

}  // namespace

Command add_presets_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "presets", "List the shipped machines (size, GPU, network), models (parameters, shape) and GPUs (peaks, memory)");
  cmd->add_flag("--json", *json, "Print one JSON object: {machines: [...], models: [...], gpus: [...]}");
  return {cmd, [json](std::ostream& out, std::ostream&) {
            const auto j = all_presets();
            if (*json)
              out << j.dump(2) << "\n";
            else
              print_presets(out, j);
            return 0;
          }};
}

}  // namespace exasim::cli
