#include "sim/flow/flow_network.hpp"

#include "sim/flow/internal/components_solver.hpp"
#include "sim/flow/internal/local_solver.hpp"
#include "sim/flow/internal/reference_solver.hpp"
#include "sim/flow/internal/sort_ids.hpp"

#include <stdexcept>
#include <string>

namespace exasim::flow {

namespace {
/// What the bookkeeping keeps for the solver (SolverFeatures), as its class declares it.
SolverFeatures features_of(Solver solver) {
  switch (solver) {
    case Solver::Local: return LocalSolver::kFeatures;
    case Solver::Components: return ComponentsSolver::kFeatures;
    case Solver::Reference: return ReferenceSolver::kFeatures;
  }
  throw std::invalid_argument("FlowNetwork: unknown solver");
}

std::unique_ptr<MaxMinSolver> make_solver(Solver solver) {
  switch (solver) {
    case Solver::Local: return std::make_unique<LocalSolver>();
    case Solver::Components: return std::make_unique<ComponentsSolver>();
    case Solver::Reference: return std::make_unique<ReferenceSolver>();
  }
  throw std::invalid_argument("FlowNetwork: unknown solver");
}
}  // namespace

FlowNetwork::FlowNetwork(const std::vector<topo::Link>& links, Solver solver, NodeLayout layout)
    : state_(links, features_of(solver)),
      solver_(make_solver(solver)),
      local_(state_.takes_shortcuts_ ? node_flows(links, layout) : std::nullopt) {}

FlowNetwork::~FlowNetwork() = default;

std::optional<NodeFlows> FlowNetwork::node_flows(const std::vector<topo::Link>& links, NodeLayout layout) {
  // NodeFlows needs every node laid out alike, its GPU-GPU links first, no GPU-GPU link outside the
  // nodes' blocks (no other route may cross them), and routes short enough for its path records: a
  // ring of g GPUs inside a node has at most 2g links (each hop direct or through one GPU).
  const std::uint32_t per_node = layout.links_per_node;
  if (layout.nodes == 0 || per_node == 0 || std::size_t{layout.nodes} * per_node > links.size() ||
      2 * layout.gpus_per_node > NodeFlows::kMaxHops)
    return std::nullopt;
  std::uint32_t gpu_links = 0;
  while (gpu_links < per_node && links[gpu_links].cls == topo::LinkClass::GpuGpu) ++gpu_links;
  if (gpu_links == 0 || gpu_links > NodeFlows::kMaxLinksPerNode) return std::nullopt;
  for (std::size_t l = 0; l < links.size(); ++l) {
    const bool node_owned = l < std::size_t{layout.nodes} * per_node;
    const bool gpu = links[l].cls == topo::LinkClass::GpuGpu;
    if (!node_owned) {
      if (gpu) return std::nullopt;
      continue;
    }
    const std::size_t local = l % per_node;
    if (gpu != (local < gpu_links) || links[l].bandwidth_Bps != links[local].bandwidth_Bps) return std::nullopt;
  }
  std::vector<double> capacities(gpu_links);
  for (std::uint32_t l = 0; l < gpu_links; ++l) capacities[l] = links[l].bandwidth_Bps;
  return NodeFlows(layout.nodes, per_node, std::move(capacities));
}

FlowId FlowNetwork::add(std::span<const topo::LinkId> full_route, double bytes, std::uint64_t tag) {
  if (full_route.empty()) throw std::logic_error("FlowNetwork::add: empty route");
  if (local_) {
    if (local_->takes(full_route)) return kNodeLocal | local_->add(full_route, bytes, tag);
    for (const topo::LinkId l : full_route)
      if (local_->is_local(l))
        throw std::logic_error("FlowNetwork::add: a route leaves a node through a GPU-GPU link (link " +
                               std::to_string(l) + "), which node-local flows assume no other route does");
  }
  return state_.add(full_route, bytes, tag);
}

std::uint64_t FlowNetwork::finish(FlowId id) {
  if (id & kNodeLocal) return local_->finish(id & ~kNodeLocal);
  return state_.finish(id);
}

void FlowNetwork::resolve(double now_s, const Scheduler& schedule) {
  if (local_) local_->resolve(now_s, [&schedule](double t, FlowId f) { schedule(t, kNodeLocal | f); });
  NetworkState& s = state_;
  if (s.dirty_links_.empty() && s.fresh_lone_.empty() && s.touched_paths_.empty() && s.takes_shortcuts_) return;
  solver_->solve(s);
  for (const NetworkState::PathId p : s.fresh_lone_) {
    if (solver_->solved(s, p)) continue;  // solved after all
    s.paths_[p].epoch = s.epoch_;
    s.comp_paths_.push_back(p);
  }
  s.fresh_lone_.clear();
  if (s.comp_paths_.empty()) return;
  // Predictions go out in flow id order, not in the order the search met the flows (which differs
  // between the incremental and the full solver): completions at equal times are then handled in the
  // same order by both, and so are the launches they trigger, which adaptive routing is sensitive to.
  changed_.clear();
  for (const NetworkState::PathId p : s.comp_paths_) {
    const double rate = s.paths_[p].new_rate;
    for (FlowId id = s.paths_[p].first; id != NetworkState::kNoId; id = s.flows_[id].next)
      if (s.flows_[id].rate != rate) changed_.push_back(id);  // else its prediction still holds
  }
  ++s.counters_.resolves;
  s.counters_.paths_filled += s.comp_paths_.size();
  s.counters_.rate_changes += changed_.size();
  sort_ids(changed_, sort_scratch_);
  for (FlowId id : changed_) change_rate(s.flows_[id], id, s.paths_[s.flows_[id].path].new_rate, now_s, schedule);
}

}  // namespace exasim::flow
