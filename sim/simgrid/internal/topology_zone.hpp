#pragma once
// A SimGrid NetZone that is an exasim topology: one host per GPU (host i is GPU i), one link per
// topology link (link i is LinkId i, directed, SHARED), and routing by Topology::route().
//
// SimGrid asks a zone for the links between two netpoints through get_local_route(). The zone answers
// with the route the runtime chose for the communication it is starting (the runtime computes it with
// the flow's key and, for adaptive routing, its load view, then queues it here); with nothing queued
// it asks the topology with flow key 0 and no load. No route is ever tabulated.
//
// Internal to sim/simgrid (includes SimGrid kernel headers).
//
// LIMITATIONS:
//  - must be the root zone (it is created first) and the only one: no hierarchy of zones;
//  - reports route latency 0 unless `report_latency` (see simgrid_runtime.hpp for why);
//  - queued routes are matched to communications by (source GPU, destination GPU) in FIFO order, which
//    holds because a SimGrid actor's communication start is one blocking simcall.

#include "topologies/topology.hpp"

#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Host.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace exasim::sg {

class TopologyZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  /// Creates the zone (the SimGrid engine must exist and have no platform yet), its hosts and links,
  /// and seals it. SimGrid owns the zone: it is deleted with the engine.
  static TopologyZone* create(const topo::Topology& topology, bool report_latency);

  [[nodiscard]] simgrid::s4u::Host* host(topo::GpuId gpu) const { return hosts_[gpu]; }
  /// The route the next communication from `src` to `dst` takes.
  void queue_route(topo::GpuId src, topo::GpuId dst, std::vector<topo::LinkId> route);

 protected:
  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

 private:
  TopologyZone(const topo::Topology& topology, bool report_latency);
  void populate();

  const topo::Topology& topology_;
  bool report_latency_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> links_;
  std::unordered_map<std::uint64_t, std::deque<std::vector<topo::LinkId>>> queued_;  ///< (src << 32 | dst)
  std::vector<topo::LinkId> scratch_;
};

}  // namespace exasim::sg
