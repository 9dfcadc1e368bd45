#include "sim/tune/analytic.hpp"

#include "sim/gpu/device_loader.hpp"
#include "sim/schedule/axonn4d.hpp"

#include <algorithm>
#include <limits>

namespace exasim::tune {

AnalyticModel::AnalyticModel(const scenario::Scenario& base)
    : topology_(scenario::build_topology(base.machine, base.gpus, base.seed)),
      gpu_(gpu::make_gpu_model(base.machine.gpu_choice)),
      gpu_of_rank_(scenario::place_ranks(base.placement, *topology_, base.gpus)),
      ranks_(base.gpus),
      step_overhead_s_(base.machine.collective_step_overhead_s) {}

AnalyticModel::~AnalyticModel() = default;

RingLink AnalyticModel::ring(std::uint32_t stride, std::uint32_t size) {
  const auto key = std::make_pair(stride, size);
  auto it = rings_.find(key);
  if (it == rings_.end()) it = rings_.emplace(key, compute_ring(stride, size)).first;
  return it->second;
}

RingLink AnalyticModel::compute_ring(std::uint32_t stride, std::uint32_t size) const {
  if (size < 2) return {std::numeric_limits<double>::infinity(), 0};
  const auto& topo = *topology_;
  const auto& links = topo.links();
  auto gpu_of = [&](std::uint32_t rank) { return gpu_of_rank_.empty() ? rank : gpu_of_rank_[rank]; };
  auto next_of = [&](std::uint32_t rank) {
    const std::uint32_t coord = (rank / stride) % size;
    return rank - coord * stride + ((coord + 1) % size) * stride;
  };
  // Every rank sends to its ring successor along the dimension at once: count the flows on each link.
  std::vector<std::uint32_t> flows(links.size(), 0);
  std::vector<topo::LinkId> routes;       // every rank's route, one after the other
  std::vector<std::size_t> starts = {0};  // rank r's route: [starts[r], starts[r + 1])
  for (std::uint32_t r = 0; r < ranks_; ++r) {
    topo.route(gpu_of(r), gpu_of(next_of(r)), r, nullptr, routes);
    starts.push_back(routes.size());
  }
  for (auto link : routes) ++flows[link];
  // Each flow gets its bottleneck link's equal share; the ring runs at its slowest edge.
  RingLink out{std::numeric_limits<double>::infinity(), 0};
  for (std::uint32_t r = 0; r < ranks_; ++r) {
    const auto* route = routes.data() + starts[r];
    const std::size_t hops = starts[r + 1] - starts[r];
    for (std::size_t h = 0; h < hops; ++h)
      out.bandwidth_Bps = std::min(out.bandwidth_Bps, links[route[h]].bandwidth_Bps / flows[route[h]]);
    out.step_latency_s = std::max(out.step_latency_s, topo.latency_s(route, hops) + step_overhead_s_);
  }
  return out;
}

double AnalyticModel::replay_s(const schedule::Plan& plan) {
  const auto& stream = plan.streams.front();
  std::vector<double> kernel_s;
  kernel_s.reserve(plan.kernels.size());
  for (const auto& kernel : plan.kernels) kernel_s.push_back(gpu_->time_s(kernel));
  std::vector<RingLink> rings;
  for (const auto& dim : plan.grid.dims()) rings.push_back(ring(dim.stride, dim.size));

  std::vector<double> slot_done(stream.slots, 0);
  std::vector<double> dim_free(plan.grid.dims().size(), 0);
  double t = 0;
  for (const auto& op : stream.ops) {
    switch (op.type) {
      case schedule::OpType::Compute: t += kernel_s[op.kernel]; break;
      case schedule::OpType::CollStart: {
        const auto p = plan.grid.dim(op.dim).size;
        const auto& link = rings[op.dim];
        const double start = std::max(t, dim_free[op.dim]);
        const double end = start + schedule::ring_steps(op.coll, p) * link.step_latency_s +
                           schedule::ring_wire_bytes(op.coll, p, op.bytes) / link.bandwidth_Bps;
        dim_free[op.dim] = end;
        slot_done[op.slot] = end;
        break;
      }
      case schedule::OpType::Wait: t = std::max(t, slot_done[op.slot]); break;
    }
  }
  return t;
}

double AnalyticModel::iteration_s(const scenario::Scenario& s) {
  auto model = s.model;
  const std::int64_t layers = model.layers;
  auto time_with = [&](std::int64_t l) {
    model.layers = l;
    return replay_s(schedule::build_axonn4d_plan(model, s.axonn, s.training, s.overlap));
  };
  if (layers <= 2) return time_with(layers);
  const double t1 = time_with(1), t2 = time_with(2);
  return t2 + static_cast<double>(layers - 2) * (t2 - t1);
}

}  // namespace exasim::tune
