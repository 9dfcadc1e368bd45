#pragma once
// The network as the flow core sees it: directed links with a bandwidth and a latency, and a route
// (a list of links) between any two GPUs, computed on demand.
//
// Routes are never tabulated: a topology answers route() from its structure, so memory stays linear in
// the number of links even at 65,536 GPUs. Boost.Graph types never appear in this header.
//
// Every topology lays its links out the same way at the front: node n owns the ids
// [n * links_per_node, (n + 1) * links_per_node) (node_links.hpp); switch-to-switch links follow.
// GPUs are numbered node-major (GPU g is local GPU g % gpus_per_node() of node g / gpus_per_node()),
// NICs likewise (NIC index node * nics_per_node() + k).
//
// LIMITATIONS (common to every topology): links are fluid pipes with a bandwidth and a latency; there
// are no packets, buffers or switch-internal limits, and routes are fixed per flow.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::topo {

using GpuId = std::uint32_t;
using LinkId = std::uint32_t;

/// What a link connects. Local: switch to switch inside a group (2D dragonfly: same row);
/// LocalColumn: 2D dragonfly, same column; Global: between dragonfly groups; Up/Down: fat-tree links
/// towards / away from the top level.
enum class LinkClass : std::uint8_t { GpuGpu, GpuNic, NicUp, NicDown, Local, LocalColumn, Global, Up, Down };
inline constexpr std::size_t kLinkClassCount = 9;
[[nodiscard]] std::string_view to_string(LinkClass c);

/// One direction of a physical link.
struct Link {
  double bandwidth_Bps = 0;
  double latency_s = 0;
  LinkClass cls = LinkClass::GpuGpu;
};

/// A vertex of the topology graph, for export and inspection. Index: the GpuId for GPUs,
/// node * nics_per_node() + k for NICs, the switch id for switches, the node for a node's NVSwitch
/// fabric (node.hpp; not a network switch: switch_count() leaves it out).
enum class VertexKind : std::uint8_t { Gpu, Nic, Switch, NodeSwitch };
[[nodiscard]] std::string_view to_string(VertexKind k);
struct Vertex {
  VertexKind kind = VertexKind::Gpu;
  std::uint32_t index = 0;
  friend bool operator==(const Vertex&, const Vertex&) = default;
};
/// The two ends of a directed link.
struct LinkEnds {
  Vertex from;
  Vertex to;
  friend bool operator==(const LinkEnds&, const LinkEnds&) = default;
};

/// What adaptive routing may look at: the load the flow core currently has on each link.
class LinkLoadView {
 public:
  virtual ~LinkLoadView() = default;
  [[nodiscard]] virtual double load(LinkId link) const = 0;
  /// The same loads as a dense array indexed by link, when the view keeps them so (it must stay valid
  /// until the view changes); null otherwise. Adaptive routing reads a load per hop of every
  /// candidate path: one virtual call per route instead of one per link.
  [[nodiscard]] virtual const std::uint32_t* dense_loads() const { return nullptr; }
};

struct TopologySummary;  // summary.hpp

class Topology {
 public:
  virtual ~Topology() = default;

  [[nodiscard]] virtual std::string describe() const = 0;
  [[nodiscard]] virtual std::uint32_t gpu_count() const = 0;
  [[nodiscard]] virtual std::uint32_t gpus_per_node() const = 0;
  [[nodiscard]] std::uint32_t node_of(GpuId gpu) const { return gpu / gpus_per_node(); }
  [[nodiscard]] std::uint32_t node_count() const { return gpu_count() / gpus_per_node(); }
  [[nodiscard]] virtual std::uint32_t nics_per_node() const = 0;
  [[nodiscard]] virtual std::uint32_t switch_count() const = 0;
  /// NVSwitch fabrics inside nodes (one per node with gpu_links = nvswitch, else none).
  [[nodiscard]] virtual std::uint32_t node_switch_count() const = 0;
  /// Locality domains placement packs jobs into: dragonfly groups, fat-tree pods (3 levels) or leaf
  /// switches (2 levels); 1 where there are none (single switch).
  [[nodiscard]] virtual std::uint32_t group_count() const { return 1; }
  [[nodiscard]] virtual std::uint32_t group_of_node(std::uint32_t /*node*/) const { return 0; }
  /// The group of switch `sw` (a dragonfly's; 0 where the network has no groups).
  [[nodiscard]] virtual std::uint32_t group_of_switch(std::uint32_t /*sw*/) const { return 0; }

  [[nodiscard]] const std::vector<Link>& links() const { return links_; }
  /// Links each node owns: node n owns [n * links_per_node(), (n + 1) * links_per_node()).
  [[nodiscard]] virtual std::uint32_t links_per_node() const = 0;
  /// The two vertices a link joins (for export and route checks); throws std::out_of_range for a bad id.
  [[nodiscard]] virtual LinkEnds link_ends(LinkId link) const = 0;
  /// Directed links per LinkClass, indexed by the enum value.
  [[nodiscard]] std::array<std::uint64_t, kLinkClassCount> link_counts() const;

  /// Appends the links from `src` to `dst` (src != dst) to `out`. `flow_key` spreads flows over parallel
  /// paths deterministically; `load` (may be null) lets adaptive policies avoid busy links.
  virtual void route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
                     std::vector<LinkId>& out) const = 0;
  /// route(), and latency_s() of the links it appended: the same number, which a topology that knows
  /// its links' latencies from how it built the route may find without reading a table per link.
  virtual double route_with_latency(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
                                    std::vector<LinkId>& out) const {
    const std::size_t start = out.size();
    route(src, dst, flow_key, load, out);
    return latency_s(out.data() + start, out.size() - start);
  }

  /// route() reads the load of no link below this id (node links come first; adaptive policies only
  /// compare switch links). A caller that counts load for later routing decisions (a ring's earlier
  /// hops) can skip the links below it. Default: every link, i.e. route() never reads load.
  [[nodiscard]] virtual LinkId first_load_read_link() const { return static_cast<LinkId>(links_.size()); }

  /// Parts a collective's flow is cut into and routed one after another under adaptive routing, each
  /// seeing the ones before it as load (dragonfly.hpp, adaptive_parts). 1: a flow is routed whole.
  [[nodiscard]] virtual std::uint32_t route_parts() const { return 1; }

  /// Machine-independent figures for `exasim topo` (summary.hpp).
  [[nodiscard]] virtual TopologySummary summary() const = 0;

  /// Sum of the latencies of a route.
  [[nodiscard]] double latency_s(const std::vector<LinkId>& route) const {
    return latency_s(route.data(), route.size());
  }
  /// Sum of the latencies of `count` links from `route` (one hop of a longer list).
  [[nodiscard]] double latency_s(const LinkId* route, std::size_t count) const;

 protected:
  LinkId add_link(Link link);
  void reserve_links(std::size_t n) {
    links_.reserve(n);
    latency_index_.reserve(n);
  }
  /// Fills the fields every topology computes the same way (counts, links per class, injection).
  void fill_common_summary(TopologySummary& s) const;

 private:
  std::vector<Link> links_;
  // Route latencies are summed for every flow the runtimes start: one byte per link indexing a few
  // distinct values stays in cache where the 24-byte Link records of a large machine do not.
  std::vector<std::uint8_t> latency_index_;
  std::vector<double> latency_values_;
};

}  // namespace exasim::topo
