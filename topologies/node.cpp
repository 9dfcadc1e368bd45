#include "topologies/node.hpp"

#include "sim/core/json_view.hpp"

namespace exasim::topo {

NodeSpec load_node_spec(const JsonView& v) {
  v.check_keys({"gpus", "gpu_gpu_bandwidth_Bps", "gpu_gpu_latency_s", "nics", "nic_bandwidth_Bps", "nic_latency_s",
                "sources"});
  NodeSpec n;
  n.gpus = static_cast<std::uint32_t>(v.integer("gpus", 1, 64));
  n.gpu_gpu_bandwidth_Bps = v.number("gpu_gpu_bandwidth_Bps", 0, 1e15);
  n.gpu_gpu_latency_s = v.number("gpu_gpu_latency_s", 0, 1, /*min_exclusive=*/false);
  n.nics = static_cast<std::uint32_t>(v.integer("nics", 1, 64));
  if (n.nics > n.gpus) v.fail("nics", "at most one NIC per GPU is supported (got " + std::to_string(n.nics) + ")");
  n.nic_bandwidth_Bps = v.number("nic_bandwidth_Bps", 0, 1e15);
  n.nic_latency_s = v.number("nic_latency_s", 0, 1, /*min_exclusive=*/false);
  return n;
}

}  // namespace exasim::topo
