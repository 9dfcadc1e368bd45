#pragma once
// What each link carried over a run, for `exasim simulate --links`: bytes (per crossing: a route that
// crosses a link k times puts its bytes on it k times, as the flow models count it) and busy time
// (how long at least one flow was on it). Both simulating runtimes feed one of these from their
// network backends, at the same points (a flow starts, a flow ends), so their link loads agree where
// their flows do. The bytes are also kept per grid dimension of the collective that sent them, so that a
// report can show one dimension's traffic (a mixture of experts' all-to-alls over ep).
//
// LIMITATIONS:
//  - busy means "some flow was active on the link", not "the link was saturated": a link that carried
//    one slow flow for a second is as busy as one that was full for that second. Utilisation
//    (LinkLoads::utilisation) is the bytes over what the link could have carried in the iteration.
//  - the route latency terms (a stage's latency after its bandwidth phase) are not link time.

#include "topologies/topology.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace exasim::runtime {

class LinkMeter {
 public:
  explicit LinkMeter(std::size_t links) : bytes_(links, 0), busy_s_(links, 0), since_s_(links, 0), active_(links, 0) {}

  /// `dim`: the grid dimension of the collective (or Send/Recv) the flow belongs to.
  void flow_started(std::span<const topo::LinkId> route, double bytes, double now_s, std::size_t dim) {
    if (by_dim_.size() <= dim) by_dim_.resize(dim + 1);
    if (by_dim_[dim].empty()) by_dim_[dim].assign(bytes_.size(), 0.0);
    for (const topo::LinkId l : route) {
      bytes_[l] += bytes;
      by_dim_[dim][l] += bytes;
      if (active_[l]++ == 0) since_s_[l] = now_s;
    }
  }
  void flow_ended(std::span<const topo::LinkId> route, double now_s) {
    for (const topo::LinkId l : route)
      if (--active_[l] == 0) busy_s_[l] += now_s - since_s_[l];
  }
  /// Per link: bytes carried, then seconds busy (links still busy count up to now_s).
  [[nodiscard]] std::vector<double> bytes() const { return bytes_; }
  /// Per grid dimension, per link (empty for a dimension that sent nothing).
  [[nodiscard]] std::vector<std::vector<double>> bytes_by_dim() const { return by_dim_; }
  [[nodiscard]] std::vector<double> busy_s(double now_s) const {
    std::vector<double> busy = busy_s_;
    for (std::size_t l = 0; l < busy.size(); ++l)
      if (active_[l] > 0) busy[l] += now_s - since_s_[l];
    return busy;
  }

 private:
  std::vector<double> bytes_;
  std::vector<std::vector<double>> by_dim_;
  std::vector<double> busy_s_;
  std::vector<double> since_s_;
  std::vector<std::uint32_t> active_;
};

}  // namespace exasim::runtime
