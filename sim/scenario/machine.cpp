#include "sim/scenario/machine.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "topologies/single_switch.hpp"

namespace exasim::scenario {

MachineSpec load_machine_spec(const JsonView& v) {
  v.check_keys({"name", "description", "gpu", "node", "network", "collectives", "sources"});
  MachineSpec m;
  m.name = v.string_or("name", "custom");
  m.source = v.source();
  m.gpu = gpu::load_gpu_spec(v.object("gpu"));
  m.node = topo::load_node_spec(v.object("node"));
  auto net = v.object("network");
  net.check_keys({"topology", "switch_latency_s", "max_nodes", "sources"});
  m.network = net.choice("topology", {"single_switch"});
  m.switch_latency_s = net.number_or("switch_latency_s", 0, 0, 1, /*min_exclusive=*/false);
  m.max_nodes = static_cast<std::uint32_t>(net.integer_or("max_nodes", 0, 0, 1 << 24));
  if (v.has("collectives")) {
    auto coll = v.object("collectives");
    coll.check_keys({"step_overhead_s", "sources"});
    m.collective_step_overhead_s = coll.number_or("step_overhead_s", 0, 0, 1, /*min_exclusive=*/false);
  }
  return m;
}

std::unique_ptr<topo::Topology> build_topology(const MachineSpec& m, std::uint32_t gpus) {
  const std::uint32_t nodes = (gpus + m.node.gpus - 1) / m.node.gpus;
  if (m.max_nodes != 0 && nodes > m.max_nodes) {
    throw InputError(m.source, "network.max_nodes",
                     "the job needs " + std::to_string(nodes) + " nodes, the machine has " +
                         std::to_string(m.max_nodes));
  }
  topo::SingleSwitchParams p;
  p.node = m.node;
  p.nodes = nodes;
  p.switch_latency_s = m.switch_latency_s;
  return std::make_unique<topo::SingleSwitch>(p);
}

}  // namespace exasim::scenario
