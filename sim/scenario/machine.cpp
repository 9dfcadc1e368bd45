#include "sim/scenario/machine.hpp"

#include "sim/collectives/nccl_tuner.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "topologies/network.hpp"

namespace exasim::scenario {

namespace {

// A calibration writes 2 bands of 3 kinds over every group size and again for each size it measured
// (every divisor of its rank count: 72 rows at 60 ranks); 512 leaves room for finer tables and bounds
// what a hostile file can make every collective scan.
constexpr std::size_t kMaxStepCosts = 512;

std::vector<collectives::StepCost> load_step_costs(const JsonView& coll) {
  std::vector<collectives::StepCost> rows;
  if (!coll.has("step_costs")) return rows;
  const auto& list = coll.json().at("step_costs");
  if (!list.is_array() || list.size() > kMaxStepCosts)
    coll.fail("step_costs", "must be an array of at most " + std::to_string(kMaxStepCosts) + " objects");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = coll.field("step_costs") + "[" + std::to_string(i) + "]";
    if (!list[i].is_object()) coll.fail("step_costs", "entry " + std::to_string(i) + " is not an object");
    JsonView row(list[i], coll.source(), where);
    row.check_keys({"kind", "up_to_bytes", "members", "step_overhead_s", "bandwidth_scale", "sources"});
    collectives::StepCost c;
    const auto kind = row.choice("kind", {"all_reduce", "all_gather", "reduce_scatter"});
    c.kind = *schedule::coll_kind_of(kind);
    if (row.has("up_to_bytes")) c.up_to_bytes = row.number("up_to_bytes", 0, 1e18);
    if (row.has("members")) c.members = static_cast<std::uint32_t>(row.integer("members", 2, 1u << 20));
    c.step_overhead_s = row.number("step_overhead_s", 0, 1, /*min_exclusive=*/false);
    // A collective 20x slower or faster than its links is a unit mistake, not a measurement.
    c.bandwidth_scale = row.number_or("bandwidth_scale", 1, 0.05, 20, /*min_exclusive=*/false);
    for (const auto& earlier : rows)
      if (earlier.kind == c.kind && earlier.members == c.members && earlier.up_to_bytes == c.up_to_bytes)
        row.fail("up_to_bytes", "repeats the band of an earlier " + std::string(kind) + " row" +
                                    (c.members ? " of " + std::to_string(c.members) + " members" : ""));
    rows.push_back(c);
  }
  return rows;
}

}  // namespace

MachineSpec load_machine_spec(const JsonView& v) {
  v.check_keys({"name", "description", "gpu", "node", "network", "collectives", "sources"});
  MachineSpec m;
  m.name = v.string_or("name", "custom");
  (void)v.string_or("description", "");  // free text, but text
  m.source = v.source();
  m.gpu_choice = gpu::load_gpu_choice(v, "gpu");
  m.gpu = gpu::to_gpu_spec(m.gpu_choice.device);
  m.node = topo::load_node_spec(v.object("node"));
  auto net = v.object("network");
  m.network = net.json();
  m.network_source = net.source();
  m.network_path = net.path();
  std::string library = collectives::default_nccl_profile(m.gpu_choice.device.name);
  if (v.has("collectives")) {
    auto coll = v.object("collectives");
    coll.check_keys({"step_overhead_s", "library", "step_costs", "group_order", "sources"});
    m.collective_step_overhead_s = coll.number_or("step_overhead_s", 0, 0, 1, /*min_exclusive=*/false);
    const std::string order = coll.string_or("group_order", "posted");
    if (order != "posted" && order != "concurrent")
      coll.fail("group_order", "'" + order +
                                   "' is not one of: posted (one at a time, NCCL/RCCL), concurrent (beside each "
                                   "other, an MPI library)");
    m.collectives_in_post_order = order == "posted";
    m.step_costs = load_step_costs(coll);
    // The shipped profiles (collectives::nccl_profiles()) are the choices.
    library = coll.string_or("library", library);
    if (!collectives::find_nccl_profile(library))
      coll.fail("library", "'" + library + "' is not one of: " + collectives::nccl_profile_names());
  }
  m.nccl_profile = *collectives::find_nccl_profile(library);
  // NVLS needs an NVSwitch that reduces (Hopper's third generation on): the node's fabric decides.
  m.nccl_profile.nvls = m.nccl_profile.nvls_supported && m.node.gpu_links == topo::GpuLinkLayout::NvSwitch;
  return m;
}

std::unique_ptr<topo::Topology> build_topology(const MachineSpec& m, std::uint32_t gpus, std::uint64_t seed) {
  JsonView net(m.network, m.network_source, m.network_path);
  topo::NetworkOptions options;
  options.nodes_needed = (gpus + m.node.gpus - 1) / m.node.gpus;
  options.seed = seed;
  return topo::build_network(m.node, net, options);
}

}  // namespace exasim::scenario
