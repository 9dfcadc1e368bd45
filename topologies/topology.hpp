#pragma once
// The network as the flow core sees it: directed links with a bandwidth and a latency, and a route
// (a list of links) between any two GPUs, computed on demand.
//
// Routes are never tabulated: a topology answers route() from its structure, so memory stays linear in
// the number of links even at 65,536 GPUs. Boost.Graph types never appear in this header.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::topo {

using GpuId = std::uint32_t;
using LinkId = std::uint32_t;

enum class LinkClass : std::uint8_t { GpuGpu, GpuNic, NicUp, NicDown, Local, Global };
[[nodiscard]] std::string_view to_string(LinkClass c);

/// One direction of a physical link.
struct Link {
  double bandwidth_Bps = 0;
  double latency_s = 0;
  LinkClass cls = LinkClass::GpuGpu;
};

/// What adaptive routing may look at: the load the flow core currently has on each link.
class LinkLoadView {
 public:
  virtual ~LinkLoadView() = default;
  [[nodiscard]] virtual double load(LinkId link) const = 0;
};

class Topology {
 public:
  virtual ~Topology() = default;

  [[nodiscard]] virtual std::string describe() const = 0;
  [[nodiscard]] virtual std::uint32_t gpu_count() const = 0;
  [[nodiscard]] virtual std::uint32_t gpus_per_node() const = 0;
  [[nodiscard]] std::uint32_t node_of(GpuId gpu) const { return gpu / gpus_per_node(); }

  [[nodiscard]] const std::vector<Link>& links() const { return links_; }

  /// Appends the links from `src` to `dst` (src != dst) to `out`. `flow_key` spreads flows over parallel
  /// paths deterministically; `load` (may be null) lets adaptive policies avoid busy links.
  virtual void route(GpuId src, GpuId dst, std::uint64_t flow_key, const LinkLoadView* load,
                     std::vector<LinkId>& out) const = 0;

  /// Sum of the latencies of a route.
  [[nodiscard]] double latency_s(const std::vector<LinkId>& route) const;

 protected:
  LinkId add_link(Link link);

 private:
  std::vector<Link> links_;
};

}  // namespace exasim::topo
