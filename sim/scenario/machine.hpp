#pragma once
// A machine: its GPU, its nodes and the network that joins them, loaded from a preset or inline JSON.
// Machine presets live in topologies/presets/<name>.json; every number there carries its source.
//
//   {"name": ..., "gpu": "mi250x-gcd" | {"device": ..., overrides, "calibration": csv},
//    "node": {...}, "network": {"topology": "single_switch" | "dragonfly" | ..., ...},
//    "collectives": {"step_overhead_s": ..., "library": "nccl-ampere" | "nccl-hopper" | "nccl-blackwell" |
//                    "rccl-mi200" (default: the GPU's, collectives::default_nccl_profile),
//                    "step_costs": [{"kind": "all_reduce" | "all_gather" | "reduce_scatter",
//                                    "up_to_bytes": S (optional: any size), "members": p (optional:
//                                    any group size), "step_overhead_s": ...,
//                                    "bandwidth_scale": ...}, ...] (optional, collectives/step_costs.hpp),
//                    "group_order": "posted" (default: a group's collectives one at a time, as NCCL/RCCL
//                                   run them) | "concurrent" (beside each other: an MPI library's
//                                   non-blocking collectives, written by `exasim calibrate`)}}
//
// The network object is kept as JSON and handed to topologies/ when a topology is built, so that each
// topology validates its own fields in one place.
//
// LIMITATIONS: one GPU kind and one node kind per machine (no mixed partitions such as Perlmutter's
// 40 GB and 80 GB A100 nodes); storage and service groups are not modelled.

#include "sim/collectives/nccl_tuner.hpp"
#include "sim/collectives/step_costs.hpp"
#include "sim/gpu/device_loader.hpp"
#include "sim/gpu/gpu_model.hpp"
#include "topologies/node.hpp"
#include "topologies/topology.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace exasim {
class JsonView;
}

namespace exasim::scenario {

struct MachineSpec {
  std::string name;
  std::string source;  ///< file it came from
  gpu::GpuChoice gpu_choice;
  gpu::GpuSpec gpu;  ///< roofline view of gpu_choice.device (peak figures for reports)
  topo::NodeSpec node;
  nlohmann::json network;                         ///< the "network" object, validated by the topology builder
  std::string network_source;                     ///< file the network object came from
  std::string network_path;                       ///< its dotted path there ("machine.network" or "network")
  double collective_step_overhead_s = 0;          ///< software cost per ring step (NCCL/RCCL kernel, proxy)
  bool collectives_in_post_order = true;          ///< collectives.group_order "posted" (runtime::Job)
  collectives::NcclProfile nccl_profile;          ///< the library `collectives.algorithm: nccl` models
  std::vector<collectives::StepCost> step_costs;  ///< calibrated per kind and size band; usually empty

  [[nodiscard]] std::string topology_kind() const { return network.value("topology", std::string{}); }
};

/// Validates the gpu, node and collectives objects; the network object is validated by build_topology
/// (each topology checks its own fields once, where it is built).
[[nodiscard]] MachineSpec load_machine_spec(const JsonView& view);

/// The topology of `machine` for a job of `gpus` GPUs: a single switch is sized to the job, a dragonfly
/// is the whole machine. InputError when the machine has fewer nodes than needed. `gpus` = 0 builds the
/// whole machine (for `exasim topo`).
[[nodiscard]] std::unique_ptr<topo::Topology> build_topology(const MachineSpec& machine, std::uint32_t gpus,
                                                             std::uint64_t seed = 0);

}  // namespace exasim::scenario
