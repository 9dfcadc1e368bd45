#pragma once
// A machine: its GPU, its nodes and the network that joins them, loaded from a preset or inline JSON.
// Machine presets live in topologies/presets/<name>.json; every number there carries its source.
//
// LIMITATIONS (first milestone): the only network is "single_switch" (nodes under one ideal switch);
// dragonflies and fat-trees come with the topology generators.

#include "sim/gpu/gpu_model.hpp"
#include "topologies/node.hpp"
#include "topologies/topology.hpp"

#include <memory>
#include <string>

namespace exasim {
class JsonView;
}

namespace exasim::scenario {

struct MachineSpec {
  std::string name;
  std::string source;  ///< file it came from
  gpu::GpuSpec gpu;
  topo::NodeSpec node;
  std::string network = "single_switch";
  double switch_latency_s = 0;
  std::uint32_t max_nodes = 0;              ///< 0: as many as the job needs
  double collective_step_overhead_s = 0;    ///< software cost per ring step (NCCL/RCCL kernel, proxy)
};

[[nodiscard]] MachineSpec load_machine_spec(const JsonView& view);

/// The topology of `machine` sized for `gpus` GPUs (whole nodes). Throws InputError when the machine
/// has fewer nodes than needed.
[[nodiscard]] std::unique_ptr<topo::Topology> build_topology(const MachineSpec& machine, std::uint32_t gpus);

}  // namespace exasim::scenario
