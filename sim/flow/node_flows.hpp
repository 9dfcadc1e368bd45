#pragma once
// Flows that never leave a node: every link of their route is a GPU-GPU link of one node (a tensor-
// parallel ring among the GPUs of a node, a pipeline transfer between two of them). No other flow
// crosses those links (a GPU reaches its NIC without one: node.hpp), so such a flow shares bandwidth
// only with the node-local flows of its own node, and a node is solved on its own.
//
// What this buys is memory, not arithmetic. In a large run these flows are most of the flows (85 % at
// 32,768 GCDs in the 4D benchmark), and through the general FlowNetwork each one visits several link
// records, a route segment, link entry lists and solver scratch spread over the machine's tables: at
// 32k GCDs those are cold again by the time the next collective of the node comes round. Here a node
// keeps its paths in one list of one-cache-line records holding their route as local link numbers,
// and everything the solver needs besides (link loads, residual capacities) is rebuilt on the stack.
//
// Answers are the general solver's, bit for bit: a node is re-solved by the same progressive filling
// (links frozen in (share, global link id) order, one subtraction of the share per flow and route
// entry), a path alone gets the same closed form, and predictions use the same expressions. Re-solving
// a whole node rather than only its touched component changes no rate: components do not interact.
//
// LIMITATIONS:
//  - the node's link layout must be the same on every node (node_links.hpp guarantees it) with at most
//    64 links per node, and a route may have at most kMaxHops entries (rings of up to 16 GPUs, each
//    hop one or two links: direct, through one other GPU, or up to the node's NVSwitch and down);
//    FlowNetwork falls back to its general solver for machines outside this;
//  - a node is re-solved whole on any change: cheap for the few paths a node carries (one per ring and
//    pipeline pair), quadratic in its paths if a plan kept hundreds of distinct routes in flight;
//  - no other route may cross a GPU-GPU link: the fast core turns node-local flows off for plans with
//    a ring that crosses nodes at some hops and not at others (node_layout() in fast_runtime.cpp), and
//    FlowNetwork::add() throws on a route that mixes the two.

#include "sim/core/fast_divisor.hpp"
#include "topologies/topology.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

namespace exasim::flow {

using FlowId = std::uint32_t;

/// A flow's rate changes at `now_s`: what it sent at the old rate comes off its bytes and its new
/// finish is scheduled, replacing the old one: infinity if it no longer moves. One definition for both
/// solvers, so that they predict the same times bit for bit.
template <typename FlowRecord, typename Schedule>
void change_rate(FlowRecord& f, FlowId id, double rate, double now_s, const Schedule& schedule) {
  f.remaining = std::max(0.0, f.remaining - f.rate * (now_s - f.updated_s));
  f.updated_s = now_s;
  f.rate = rate;
  schedule(rate > 0 ? now_s + f.remaining / rate : std::numeric_limits<double>::infinity(), id);
}

class NodeFlows {
 public:
  using Scheduler = std::function<void(double finish_s, FlowId flow)>;
  static constexpr std::uint32_t kMaxHops = 35;
  static constexpr std::uint32_t kMaxLinksPerNode = 64;
  static constexpr std::uint32_t kMaxFlows = 0x80000000u;  ///< ids leave FlowNetwork's tag bit free

  /// `capacities`: bandwidth of the node-owned links of node 0 that node-local routes may use (the
  /// first capacities.size() links of every node's block of `per_node`).
  NodeFlows(std::uint32_t nodes, std::uint32_t per_node, std::vector<double> capacities);

  /// Whether every link of the route is one of these links of a single node.
  [[nodiscard]] bool takes(std::span<const topo::LinkId> route) const;
  /// Whether the link is one of the node-local links (no other route may cross it).
  [[nodiscard]] bool is_local(topo::LinkId link) const {
    // Every network route is checked link by link (FlowNetwork::add()): no division, no early out.
    return (link < nodes_ * per_node_) & (per_node_div_.mod(link) < local_links_);
  }
  /// A new flow; takes(route) must hold. Its rate is set by the next resolve().
  FlowId add(std::span<const topo::LinkId> route, double bytes, std::uint64_t tag);
  void prefetch(FlowId flow) const { __builtin_prefetch(&flows_[flow]); }
  /// Removes a completed flow; returns its tag.
  std::uint64_t finish(FlowId flow);
  /// Re-solves the nodes whose flows changed since the last call; predictions go out in flow id order.
  void resolve(double now_s, const Scheduler& schedule);

  [[nodiscard]] double rate_Bps(FlowId flow) const { return flows_[flow].rate; }
  [[nodiscard]] std::size_t active_flows() const { return active_; }
  [[nodiscard]] std::size_t active_paths() const { return active_paths_; }

 private:
  static constexpr std::uint32_t kNoId = 0xffffffff;

  /// A route inside one node and its active flows; one cache line, route included.
  struct alignas(64) Path {
    double rate = 0;             ///< the solver's result for its flows
    std::uint64_t mask = 0;      ///< local links crossed
    std::uint32_t flows = 0;     ///< active flows on it: its weight on every link it crosses
    FlowId first = kNoId;        ///< one of them; the rest follow Flow::next
    std::uint32_t next = kNoId;  ///< the node's next path
    std::uint8_t hops = 0;
    std::uint8_t route[kMaxHops];  ///< local link numbers (global id - node * per_node)
  };
  static_assert(sizeof(Path) == 64, "a node-local path should fill one cache line");
  struct Flow {
    double remaining = 0;  ///< bytes left at `updated_s`
    double rate = 0;       ///< bytes/s
    double updated_s = 0;
    std::uint64_t tag = 0;
    std::uint32_t path = kNoId;
    std::uint32_t node = 0;
    FlowId prev = kNoId;  ///< the other flows of its path: a doubly linked list
    FlowId next = kNoId;
  };

  void solve(std::uint32_t node);
  void mark(std::uint32_t node);

  std::uint32_t nodes_;
  std::uint32_t per_node_;
  FastDivisor per_node_div_;  ///< by per_node_
  std::uint32_t local_links_;
  std::vector<double> capacities_;   ///< per local link number
  std::vector<std::uint32_t> head_;  ///< per node: its first path, kNoId if none
  std::vector<std::uint8_t> dirty_;  ///< per node: in dirty_nodes_
  std::vector<std::uint32_t> dirty_nodes_;
  std::vector<Path> paths_;
  std::vector<std::uint32_t> free_paths_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_flows_;
  std::vector<FlowId> changed_;
  std::vector<FlowId> sort_scratch_;  ///< for sort_ids()
  std::vector<std::uint8_t> frozen_;  ///< solver scratch, per path of the node being solved
  std::size_t active_ = 0;
  std::size_t active_paths_ = 0;
};

}  // namespace exasim::flow
