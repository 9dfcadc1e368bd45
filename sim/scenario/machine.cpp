#include "sim/scenario/machine.hpp"

#include "sim/collectives/nccl_tuner.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "topologies/network.hpp"

namespace exasim::scenario {

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
    coll.check_keys({"step_overhead_s", "library", "sources"});
    m.collective_step_overhead_s = coll.number_or("step_overhead_s", 0, 0, 1, /*min_exclusive=*/false);
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
