#include "sim/simgrid/internal/topology_zone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include <stdexcept>
#include <utility>

namespace exasim::sg {

namespace {
// Hosts only sleep (compute is timed by the GPU model, not by SimGrid's CPU model); any speed works.
constexpr double kHostSpeed_flops = 1e12;

std::uint64_t pair_key(topo::GpuId src, topo::GpuId dst) { return std::uint64_t{src} << 32 | dst; }
}  // namespace

TopologyZone::TopologyZone(const topo::Topology& topology, bool report_latency)
    : NetZoneImpl("exasim"), topology_(topology), report_latency_(report_latency) {}

TopologyZone* TopologyZone::create(const topo::Topology& topology, bool report_latency) {
  if (simgrid::s4u::Engine::get_instance()->get_netzone_root() != nullptr)
    throw std::logic_error("TopologyZone must be the first (root) zone of the SimGrid platform");
  auto* zone = new TopologyZone(topology, report_latency);  // SimGrid's engine deletes its root zone
  zone->populate();
  return zone;
}

void TopologyZone::populate() {
  const std::uint32_t gpus = topology_.gpu_count();
  hosts_.reserve(gpus);
  for (topo::GpuId g = 0; g < gpus; ++g) {
    auto* host = create_host("gpu" + std::to_string(g), {kHostSpeed_flops});
    host->seal();
    // get_local_route() maps netpoints back to GPUs by their index in this zone.
    if (host->get_netpoint()->id() != g) throw std::logic_error("TopologyZone: host ids are not GPU ids");
    hosts_.push_back(host);
  }
  const auto& links = topology_.links();
  links_.reserve(links.size());
  for (std::size_t l = 0; l < links.size(); ++l) {
    std::string name = "l";  // built in two steps: GCC 12 warns (-Wrestrict) on "l" + to_string
    name += std::to_string(l);
    auto* link = create_link(name, {links[l].bandwidth_Bps});
    link->set_latency(links[l].latency_s);
    link->seal();
    links_.push_back(link->get_impl());
  }
  seal();
}

void TopologyZone::queue_route(topo::GpuId src, topo::GpuId dst, std::vector<topo::LinkId> route) {
  queued_[pair_key(src, dst)].push_back(std::move(route));
}

void TopologyZone::get_local_route(const simgrid::kernel::routing::NetPoint* src,
                                   const simgrid::kernel::routing::NetPoint* dst, simgrid::kernel::routing::Route* into,
                                   double* latency) {
  const auto s = static_cast<topo::GpuId>(src->id());
  const auto d = static_cast<topo::GpuId>(dst->id());
  const std::vector<topo::LinkId>* route = &scratch_;
  std::vector<topo::LinkId> queued;
  auto it = queued_.find(pair_key(s, d));
  if (it != queued_.end()) {
    queued = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) queued_.erase(it);
    route = &queued;
  } else {
    scratch_.clear();
    topology_.route(s, d, 0, nullptr, scratch_);
  }
  for (topo::LinkId l : *route) into->link_list_.push_back(links_[l]);
  if (report_latency_) *latency += topology_.latency_s(*route);
}

}  // namespace exasim::sg
