// `exasim topo MACHINE`: what a machine's network looks like: nodes, GPUs, NICs, switches, links per
// class, global links per group pair, the longest minimal route, bisection bandwidth and taper; and the
// whole graph exported for other tools (Graphviz, Gephi, networkx).

#include "sim/cli/command.hpp"
#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/core/output_files.hpp"
#include "sim/scenario/machine.hpp"
#include "topologies/summary.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>

namespace exasim::cli {

namespace {

struct TopoOptions {
  std::string machine;
  std::vector<std::string> overrides;
  std::vector<std::string> export_args;  ///< FORMAT FILE
  bool json = false;
};

scenario::MachineSpec load_machine(const TopoOptions& o) {
  auto path = find_preset("topologies/presets", o.machine);
  if (path.empty()) {
    std::string names;
    for (const auto& n : preset_names("topologies/presets")) names += (names.empty() ? "" : ", ") + n;
    throw InputError("topo", o.machine, "no such machine preset or file (presets: " + names + ")");
  }
  auto doc = read_json_file(path.string());
  for (const auto& assignment : o.overrides) assign_field(doc, parse_assignment(assignment), "the machine file");
  return scenario::load_machine_spec(JsonView(doc, path.string(), ""));
}

std::string si(double v, const char* unit) {
  const char* prefix[] = {"", "k", "M", "G", "T", "P"};
  int p = 0;
  while (v >= 1000 && p < 5) {
    v /= 1000;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefix[p], unit);
  return buf;
}

/// How a node's GPUs reach each other, with the figure that describes it.
std::string node_links(const topo::NodeSpec& n) {
  switch (n.gpu_links) {
    case topo::GpuLinkLayout::NvSwitch:
      return "nvswitch, " + si(n.gpu_switch_bandwidth_Bps, "B/s") + " per GPU per direction (shared by its peers)";
    case topo::GpuLinkLayout::FrontierMi250x: return "frontier_mi250x (Infinity Fabric matrix, 50-200 GB/s per pair)";
    case topo::GpuLinkLayout::AllToAll: break;
  }
  return "all_to_all, " + si(n.gpu_gpu_bandwidth_Bps, "B/s") + " per pair per direction";
}

void print_readable(std::ostream& out, const scenario::MachineSpec& m, const topo::TopologySummary& s) {
  out << "exasim topo: " << m.name << "\n  " << s.description << "\n\n";
  char buf[256];
  auto row = [&](const char* label, const std::string& value) {
    std::snprintf(buf, sizeof buf, "  %-32s %s\n", label, value.c_str());
    out << buf;
  };
  row("nodes", std::to_string(s.nodes));
  row("GPUs", std::to_string(s.gpus) + " (" + std::to_string(s.gpus_per_node) + " per node, " + m.gpu.name + ")");
  row("GPU links in a node", node_links(m.node));
  row("NICs", std::to_string(s.nics));
  row("switches", std::to_string(s.switches));
  row("groups", std::to_string(s.groups));
  if (s.global_links_per_group_pair > 0)
    row("global links per group pair", std::to_string(s.global_links_per_group_pair));
  row("longest minimal route", std::to_string(s.max_minimal_switch_hops) + " switch-to-switch hops");
  row("routing", s.routing);
  row("injection bandwidth", si(s.injection_bandwidth_Bps, "B/s") + " per direction");
  row("global bisection bandwidth", si(s.global_bisection_bandwidth_Bps, "B/s") + " per direction");
  std::snprintf(buf, sizeof buf, "%.3f (global over injection bandwidth at the narrowest level)", s.taper);
  row("taper", buf);
  out << "\n  directed links per class:\n";
  for (const auto& [cls, count] : s.links_per_class) {
    std::snprintf(buf, sizeof buf, "    %-12s %12llu\n", cls.c_str(), static_cast<unsigned long long>(count));
    out << buf;
  }
}

}  // namespace

Command add_topo_command(CLI::App& app) {
  auto o = std::make_shared<TopoOptions>();
  auto* cmd = app.add_subcommand("topo", "Describe a machine's network: nodes, switches, links, routes, taper");
  cmd->add_option("machine", o->machine, "Machine preset name (see `exasim presets`) or JSON file")->required();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_option("--set", o->overrides, "Override a machine field: path=value (repeatable), e.g. network.groups=8")
      ->allow_extra_args(false);
  cmd->add_option("--export", o->export_args, "Write the whole graph: FORMAT FILE, FORMAT one of graphml, dot, json")
      ->expected(2);
  return {cmd, [o](std::ostream& out, std::ostream& err) {
            auto machine = load_machine(*o);
            auto topology = scenario::build_topology(machine, 0);
            // The export file is checked (its folder made) before anything is printed: a bad path must not
            // come after the work.
            std::unique_ptr<OutputFiles> export_files;
            std::filesystem::path file;
            if (!o->export_args.empty()) {
              const auto& format = o->export_args[0];
              file = o->export_args[1];
              if (format != "graphml" && format != "dot" && format != "json")
                throw InputError("--export", format, "unknown format (allowed: graphml, dot, json)");
              if (!file.has_filename()) throw InputError("--export", file.string(), "must name a file");
              export_files = std::make_unique<OutputFiles>(
                  "--export", file.has_parent_path() ? file.parent_path() : std::filesystem::path("."),
                  std::vector<std::string>{file.filename().string()});
            }
            const auto summary = topology->summary();
            if (o->json) {
              auto j = topo::to_json(summary);
              j["machine"] = machine.name;
              j["gpu"] = machine.gpu.name;
              j["gpu_links"] = std::string(topo::to_string(machine.node.gpu_links));
              out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
            } else {
              print_readable(out, machine, summary);
            }
            if (export_files) {
              // Written beside the target and renamed into place: a full disk or a kill leaves no
              // truncated graph under the final name.
              export_files->stage_stream(file.filename().string(), [&](std::ostream& stream) {
                topo::export_topology(*topology, o->export_args[0], stream);
              });
              export_files->commit();
              err << "exasim: wrote " << o->export_args[0] << " graph of " << summary.gpus << " GPUs to "
                  << o->export_args[1] << "\n";
            }
            return 0;
          }};
}

}  // namespace exasim::cli
