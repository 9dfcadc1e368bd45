#pragma once
// Flows sharing links by max-min fairness (equal weights: the CM02 sharing of SimGrid without its
// latency weighting), re-solved only for the links and flows an event touches.
//
// add() and finish() mark the touched links dirty; resolve() then takes the connected component of
// dirty links (links <-> flows that cross them, transitively), runs progressive filling on it, and
// re-predicts the completion of every flow whose rate changed. Flows elsewhere keep their rates and their
// already-scheduled completions. With `full_resolve` every active flow is re-solved instead: the
// straightforward reference solver that tests hold the incremental one against.
//
// LIMITATIONS:
//  - fluid model: no packets, no per-flow window or TCP-gamma cap, no protocol overhead on the wire;
//  - a flow's rate is bounded by its links only (no endpoint injection limit beyond the NIC links);
//  - routes are fixed for the lifetime of a flow (adaptive choice happens when it starts).

#include "topologies/topology.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace exasim::flow {

using FlowId = std::uint32_t;

class FlowNetwork final : public topo::LinkLoadView {
 public:
  /// Called by resolve() for every flow whose predicted finish time changed; older predictions for the
  /// same flow become stale (check with current()).
  using Scheduler = std::function<void(double finish_s, FlowId flow, std::uint32_t version)>;

  FlowNetwork(const std::vector<topo::Link>& links, bool full_resolve);

  /// A new flow of `bytes` over `route`; it gets its rate at the next resolve().
  FlowId add(const std::vector<topo::LinkId>& route, double bytes, std::uint64_t tag);
  /// Whether a scheduled prediction (flow, version) is still the live one.
  [[nodiscard]] bool current(FlowId flow, std::uint32_t version) const {
    return flows_[flow].active && flows_[flow].version == version;
  }
  /// Removes a completed flow; returns its tag.
  std::uint64_t finish(FlowId flow);
  /// Re-solves what changed since the last call, at simulated time `now_s`.
  void resolve(double now_s, const Scheduler& schedule);

  [[nodiscard]] double load(topo::LinkId link) const override { return static_cast<double>(link_flows_[link].size()); }
  [[nodiscard]] double rate_Bps(FlowId flow) const { return flows_[flow].rate; }
  [[nodiscard]] std::size_t active_flows() const { return active_; }
  [[nodiscard]] bool dirty() const { return !dirty_links_.empty(); }

 private:
  struct Flow {
    double remaining = 0;  ///< bytes left at `updated_s`
    double rate = 0;       ///< bytes/s
    double updated_s = 0;
    double new_rate = 0;   ///< solver scratch
    std::uint64_t tag = 0;
    std::uint32_t version = 0;
    std::uint32_t epoch = 0;  ///< solver scratch: component / frozen marks
    std::uint16_t hops = 0;   ///< route length; the route sits in route_pool_ at id * stride_
    bool active = false;
  };
  /// Per link, solver state next to the capacity it starts from (one cache line holds two links).
  struct LinkState {
    double capacity = 0;
    double residual = 0;
    std::uint32_t unfrozen = 0;
    std::uint32_t epoch = 0;
  };
  struct Share {
    double share;
    topo::LinkId link;
    bool operator>(const Share& o) const { return share > o.share || (share == o.share && link > o.link); }
  };

  [[nodiscard]] const topo::LinkId* route_of(FlowId f) const { return &route_pool_[std::size_t{f} * stride_]; }
  void widen_routes(std::size_t hops);
  void collect_component();
  void fill_component();

  std::vector<LinkState> links_;
  std::vector<std::vector<FlowId>> link_flows_;
  std::vector<Flow> flows_;
  // Routes in one flat pool, `stride_` entries per flow slot (the longest route seen so far), so that
  // adding a flow allocates nothing once slots exist. route_index_ holds, for each hop, where the flow
  // sits in link_flows_ of that link: finish() removes it in O(1) instead of searching the list.
  std::vector<topo::LinkId> route_pool_;
  std::vector<std::uint32_t> route_index_;
  std::size_t stride_ = 8;
  std::vector<FlowId> free_flows_;
  std::size_t active_ = 0;
  bool full_resolve_;

  // Dirty tracking and solver scratch.
  std::vector<topo::LinkId> dirty_links_;
  std::uint32_t epoch_ = 0;
  std::vector<topo::LinkId> comp_links_;
  std::vector<FlowId> comp_flows_;
  std::vector<FlowId> changed_;  ///< flows of the component whose rate changed, in id order
  std::vector<Share> heap_;
};

}  // namespace exasim::flow
