#include "topologies/network.hpp"

#include <stdexcept>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/single_switch.hpp"

namespace exasim::topo {

namespace {

constexpr double kMaxBandwidth_Bps = 1e15;
/// Below 1 kB/s a link is a typo (a unit slip), not a machine; such rates would also stretch a run's
/// simulated time past anything the event queue's doubles resolve.
constexpr double kMinNetworkBandwidth_Bps = 1e3;
constexpr double kMaxLatency_s = 1;

std::uint32_t count(const JsonView& v, std::string_view key, std::int64_t min = 1, std::int64_t max = 1 << 20) {
  return static_cast<std::uint32_t>(v.integer(key, min, max));
}

std::uint32_t count_or(const JsonView& v, std::string_view key, std::int64_t fallback, std::int64_t min = 1,
                       std::int64_t max = 1 << 20) {
  return static_cast<std::uint32_t>(v.integer_or(key, fallback, min, max));
}

double bandwidth(const JsonView& v, std::string_view key) {
  return v.number(key, kMinNetworkBandwidth_Bps, kMaxBandwidth_Bps, /*min_exclusive=*/false);
}
double latency(const JsonView& v, std::string_view key) {
  return v.number(key, 0, kMaxLatency_s, /*min_exclusive=*/false);
}
double latency_or_zero(const JsonView& v, std::string_view key) {
  return v.number_or(key, 0, 0, kMaxLatency_s, /*min_exclusive=*/false);
}

RoutingPolicy routing(const JsonView& v, std::initializer_list<std::string_view> allowed) {
  const std::string r = v.choice("routing", allowed, "minimal");
  if (r == "valiant") return RoutingPolicy::Valiant;
  if (r == "adaptive") return RoutingPolicy::Adaptive;
  return RoutingPolicy::Minimal;
}

void check_fits(const JsonView& v, std::string_view field, std::uint64_t needed, std::uint64_t has) {
  if (needed > has) {
    v.fail(field, "the job needs " + std::to_string(needed) + " nodes, the machine has " + std::to_string(has));
  }
}

/// A machine is built whole (every node, switch and link) before a job is placed on it, so its size is
/// bounded: 2^20 GPUs (scenario::kMaxGpus), 2^20 switches and 2^25 links build in seconds and a few GB
/// (docs/reliability.md); the 2^24-node single switch this replaced ran out of memory.
constexpr std::uint64_t kMaxMachineGpus = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxSwitches = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxLinks = std::uint64_t{1} << 25;

void check_size(const JsonView& v, std::string_view field, const NodeSpec& node, std::uint64_t nodes,
                std::uint64_t switches, std::uint64_t switch_links) {
  const std::uint64_t gpus = nodes * node.gpus;
  const std::uint64_t links = switch_links + nodes * (std::uint64_t{node.gpus} * node.gpus + 2 * node.nics);
  const auto refuse = [&](const char* what, std::uint64_t n, std::uint64_t max) {
    v.fail(field, "the machine would have " + std::to_string(n) + " " + what + ", more than the " +
                      std::to_string(max) + " exasim builds in bounded memory (docs/reliability.md)");
  };
  // Rounded up to whole nodes: a job of the most GPUs still fits nodes of any size.
  if (nodes > (kMaxMachineGpus + node.gpus - 1) / node.gpus) refuse("GPUs", gpus, kMaxMachineGpus);
  if (switches > kMaxSwitches) refuse("switches", switches, kMaxSwitches);
  if (links > kMaxLinks) refuse("links", links, kMaxLinks);
}

/// Constructors re-check consistency with std::invalid_argument; anything the checks here missed still
/// reaches the user as an InputError on the network object, never as a crash.
template <class T, class Params>
std::unique_ptr<Topology> construct(const JsonView& v, const Params& p) {
  try {
    return std::make_unique<T>(p);
  } catch (const std::invalid_argument& e) {
    throw InputError(v.source(), v.path(), e.what());
  }
}

std::unique_ptr<Topology> single_switch(const NodeSpec& node, const JsonView& v, const NetworkOptions& o) {
  v.check_keys({"topology", "switch_latency_s", "max_nodes", "routing", "sources"});
  (void)routing(v, {"minimal"});
  SingleSwitchParams p;
  p.node = node;
  p.switch_latency_s = latency_or_zero(v, "switch_latency_s");
  const std::uint32_t max_nodes = count_or(v, "max_nodes", 0, 0, 1 << 24);
  if (max_nodes != 0) check_fits(v, "max_nodes", o.nodes_needed, max_nodes);
  p.nodes = o.nodes_needed != 0 ? o.nodes_needed : (max_nodes != 0 ? max_nodes : 1);
  check_size(v, "max_nodes", node, p.nodes, 1, 0);
  return construct<SingleSwitch>(v, p);
}

/// Shared by dragonfly and dragonfly2d; `rows` = 1 for the 1D kind.
std::unique_ptr<Topology> dragonfly(const NodeSpec& node, const JsonView& v, const NetworkOptions& o, bool two_d) {
  DragonflyParams p;
  p.node = node;
  p.seed = o.seed;
  p.groups = count(v, "groups", 1, 1 << 16);
  std::string_view switches_key = "switches_per_group";
  if (two_d) {
    p.rows = count(v, "rows", 1, 1 << 10);
    p.switches_per_group = p.rows * count(v, "columns", 1, 1 << 10);
    switches_key = "columns";
  } else {
    p.switches_per_group = count(v, "switches_per_group", 1, 1 << 12);
  }
  p.endpoints_per_switch = count(v, "endpoints_per_switch", 1, 1 << 12);
  p.global_links_per_group_pair = count(v, "global_links_per_group_pair", 1, 1 << 12);
  p.ports_per_switch = count_or(v, "ports_per_switch", two_d ? 48 : 64, 1, 1 << 16);
  p.switch_latency_s = latency_or_zero(v, "switch_latency_s");
  if (two_d) {
    p.local_bandwidth_Bps = bandwidth(v, "row_bandwidth_Bps");
    p.local_latency_s = latency(v, "row_latency_s");
    p.column_bandwidth_Bps = bandwidth(v, "column_bandwidth_Bps");
    p.column_latency_s = latency(v, "column_latency_s");
  } else {
    p.local_bandwidth_Bps = bandwidth(v, "local_bandwidth_Bps");
    p.local_latency_s = latency(v, "local_latency_s");
  }
  p.global_bandwidth_Bps = bandwidth(v, "global_bandwidth_Bps");
  p.global_latency_s = latency(v, "global_latency_s");
  p.routing = routing(v, {"minimal", "valiant", "adaptive"});
  p.adaptive_bias = v.number_or("adaptive_bias", 1.0, 0, 1e6, /*min_exclusive=*/false);
  p.adaptive_candidates = static_cast<std::uint32_t>(
      v.integer_or("adaptive_candidates", p.adaptive_candidates, 1, DragonflyParams::kMaxAdaptiveCandidates));
  p.adaptive_parts =
      static_cast<std::uint32_t>(v.integer_or("adaptive_parts", 1, 1, DragonflyParams::kMaxAdaptiveParts));

  const std::uint32_t a = p.switches_per_group;
  if (node.nics > a) {
    v.fail(switches_key, "a node's " + std::to_string(node.nics) + " NICs need as many switches per group (got " +
                             std::to_string(a) + ")");
  }
  const std::uint32_t local_ports = two_d ? (a / p.rows - 1) + (p.rows - 1) : a - 1;
  if (std::uint64_t{p.endpoints_per_switch} + local_ports > p.ports_per_switch) {
    v.fail("endpoints_per_switch", "endpoints do not fit: " + std::to_string(p.endpoints_per_switch) + " endpoint + " +
                                       std::to_string(local_ports) + " local ports exceed the " +
                                       std::to_string(p.ports_per_switch) + " of ports_per_switch");
  }
  const std::uint64_t global_ports =
      (std::uint64_t{p.groups - 1} * p.global_links_per_group_pair + a - 1) / a;  // round-robin, busiest switch
  if (p.endpoints_per_switch + local_ports + global_ports > p.ports_per_switch) {
    v.fail("global_links_per_group_pair",
           "global links do not fit: the busiest switch needs " + std::to_string(global_ports) +
               " global ports ((groups - 1) x links per pair / switches per group, rounded up) besides " +
               std::to_string(p.endpoints_per_switch) + " endpoint and " + std::to_string(local_ports) +
               " local ports, more than the " + std::to_string(p.ports_per_switch) + " of ports_per_switch");
  }
  const std::uint32_t capacity = (a / node.nics) * p.endpoints_per_switch;
  p.nodes_per_group = count_or(v, "nodes_per_group", capacity, 1, 1 << 20);
  if (p.nodes_per_group > capacity) {
    v.fail("nodes_per_group", "at most " + std::to_string(capacity) + " nodes fit a group (" +
                                  std::to_string(a / node.nics) + " sets of " + std::to_string(node.nics) +
                                  " switches, one per NIC, x " + std::to_string(p.endpoints_per_switch) +
                                  " endpoints per switch); got " + std::to_string(p.nodes_per_group));
  }
  check_fits(v, "groups", o.nodes_needed, std::uint64_t{p.groups} * p.nodes_per_group);
  const std::uint64_t switches = std::uint64_t{p.groups} * a;
  check_size(v, "groups", node, std::uint64_t{p.groups} * p.nodes_per_group, switches,
             switches * local_ports + std::uint64_t{p.groups} * (p.groups - 1) * p.global_links_per_group_pair);
  return construct<Dragonfly>(v, p);
}

std::unique_ptr<Topology> fat_tree(const NodeSpec& node, const JsonView& v, const NetworkOptions& o) {
  FatTreeParams p;
  p.node = node;
  p.seed = o.seed;
  p.levels = count_or(v, "levels", 2, 2, 3);
  const bool three = p.levels == 3;
  if (three) {
    v.check_keys({"topology", "switch_latency_s", "routing", "sources", "levels", "pods", "leaves_per_pod",
                  "spines_per_pod", "cores_per_plane", "spine_uplinks_per_core", "spine_core_bandwidth_Bps",
                  "spine_core_latency_s", "endpoints_per_leaf", "leaf_uplinks_per_spine", "leaf_spine_bandwidth_Bps",
                  "leaf_spine_latency_s", "nodes", "ports_per_switch", "rail_optimized"});
    p.pods = count(v, "pods");
    p.leaves_per_pod = count(v, "leaves_per_pod");
    p.spines_per_pod = count(v, "spines_per_pod");
    p.cores_per_plane = count(v, "cores_per_plane");
    p.spine_uplinks_per_core = count_or(v, "spine_uplinks_per_core", 1);
    p.spine_core_bandwidth_Bps = bandwidth(v, "spine_core_bandwidth_Bps");
    p.spine_core_latency_s = latency(v, "spine_core_latency_s");
  } else {
    v.check_keys({"topology", "switch_latency_s", "routing", "sources", "levels", "leaves", "spines",
                  "endpoints_per_leaf", "leaf_uplinks_per_spine", "leaf_spine_bandwidth_Bps", "leaf_spine_latency_s",
                  "nodes", "ports_per_switch", "rail_optimized"});
    p.leaves_per_pod = count(v, "leaves");
    p.spines_per_pod = count(v, "spines");
  }
  const std::string_view leaves_key = three ? "leaves_per_pod" : "leaves";
  p.endpoints_per_leaf = count(v, "endpoints_per_leaf");
  p.leaf_uplinks_per_spine = count_or(v, "leaf_uplinks_per_spine", 1);
  p.leaf_spine_bandwidth_Bps = bandwidth(v, "leaf_spine_bandwidth_Bps");
  p.leaf_spine_latency_s = latency(v, "leaf_spine_latency_s");
  p.switch_latency_s = latency_or_zero(v, "switch_latency_s");
  p.ports_per_switch = count_or(v, "ports_per_switch", 64, 1, 1 << 16);
  p.routing = routing(v, {"minimal", "adaptive"});
  p.rail_optimized = v.boolean_or("rail_optimized", false);

  if (p.rail_optimized) {
    // One leaf per rail in each scalable unit: a pod's leaves come in sets of one per NIC.
    if (p.leaves_per_pod % node.nics != 0) {
      v.fail(leaves_key, "rail_optimized needs a multiple of the node's " + std::to_string(node.nics) +
                             " NICs (one leaf per rail per scalable unit); got " + std::to_string(p.leaves_per_pod));
    }
  } else if (p.endpoints_per_leaf < node.nics) {
    v.fail("endpoints_per_leaf", "a leaf must hold one node's " + std::to_string(node.nics) + " NICs (got " +
                                     std::to_string(p.endpoints_per_leaf) + ")");
  }
  const auto ports = [&](std::string_view field, const char* which, std::uint64_t needed) {
    if (needed > p.ports_per_switch) {
      v.fail(field, std::string("a ") + which + " switch needs " + std::to_string(needed) + " ports, more than the " +
                        std::to_string(p.ports_per_switch) + " of ports_per_switch");
    }
  };
  ports("endpoints_per_leaf", "leaf",
        std::uint64_t{p.endpoints_per_leaf} + std::uint64_t{p.spines_per_pod} * p.leaf_uplinks_per_spine);
  ports(leaves_key, "spine",
        std::uint64_t{p.leaves_per_pod} * p.leaf_uplinks_per_spine +
            (three ? std::uint64_t{p.cores_per_plane} * p.spine_uplinks_per_core : 0));
  if (three) ports("pods", "core", std::uint64_t{p.pods} * p.spine_uplinks_per_core);

  // Rail-optimised: each leaf holds one NIC of endpoints_per_leaf nodes, a node spans nics leaves.
  const std::uint64_t capacity = p.rail_optimized
                                     ? std::uint64_t{p.pods} * (p.leaves_per_pod / node.nics) * p.endpoints_per_leaf
                                     : std::uint64_t{p.pods} * p.leaves_per_pod * (p.endpoints_per_leaf / node.nics);
  p.nodes = count_or(v, "nodes", 0, 1, 1 << 24);
  if (p.nodes > capacity) {
    v.fail("nodes", "at most " + std::to_string(capacity) + " nodes fit the leaves; got " + std::to_string(p.nodes));
  }
  check_fits(v, three ? "pods" : "leaves", o.nodes_needed, p.nodes != 0 ? p.nodes : capacity);
  const std::uint64_t leaves = std::uint64_t{p.pods} * p.leaves_per_pod;
  const std::uint64_t spines = std::uint64_t{p.pods} * p.spines_per_pod;
  const std::uint64_t cores = three ? std::uint64_t{p.spines_per_pod} * p.cores_per_plane : 0;
  check_size(v, three ? "pods" : leaves_key, node, p.nodes != 0 ? p.nodes : capacity, leaves + spines + cores,
             leaves * p.spines_per_pod * p.leaf_uplinks_per_spine +
                 (three ? spines * p.cores_per_plane * p.spine_uplinks_per_core : 0));
  return construct<FatTree>(v, p);
}

}  // namespace

std::unique_ptr<Topology> build_network(const NodeSpec& node, const JsonView& v, const NetworkOptions& options) {
  const std::string kind = v.choice("topology", {"single_switch", "dragonfly", "dragonfly2d", "fat_tree"});
  if (kind == "single_switch") return single_switch(node, v, options);
  if (kind == "fat_tree") return fat_tree(node, v, options);
  const bool two_d = kind == "dragonfly2d";
  if (two_d) {
    v.check_keys({"topology",
                  "switch_latency_s",
                  "routing",
                  "adaptive_bias",
                  "adaptive_candidates",
                  "adaptive_parts",
                  "sources",
                  "groups",
                  "rows",
                  "columns",
                  "endpoints_per_switch",
                  "global_links_per_group_pair",
                  "nodes_per_group",
                  "ports_per_switch",
                  "row_bandwidth_Bps",
                  "row_latency_s",
                  "column_bandwidth_Bps",
                  "column_latency_s",
                  "global_bandwidth_Bps",
                  "global_latency_s"});
  } else {
    v.check_keys({"topology", "switch_latency_s", "routing", "adaptive_bias", "adaptive_candidates", "adaptive_parts",
                  "sources", "groups", "switches_per_group", "endpoints_per_switch", "global_links_per_group_pair",
                  "nodes_per_group", "ports_per_switch", "local_bandwidth_Bps", "local_latency_s",
                  "global_bandwidth_Bps", "global_latency_s"});
  }
  return dragonfly(node, v, options, two_d);
}

}  // namespace exasim::topo
