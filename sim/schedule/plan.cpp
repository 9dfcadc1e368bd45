#include "sim/schedule/plan.hpp"

namespace exasim::schedule {

std::string_view to_string(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce: return "all_reduce";
    case CollKind::AllGather: return "all_gather";
    case CollKind::ReduceScatter: return "reduce_scatter";
    case CollKind::Send: return "send";
    case CollKind::Recv: return "recv";
  }
  return "?";
}

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::Forward: return "forward";
    case Phase::Recompute: return "recompute";
    case Phase::Backward: return "backward";
    case Phase::Optimizer: return "optimizer";
  }
  return "?";
}

double ring_wire_bytes(CollKind kind, std::uint32_t p, double buffer_bytes) {
  if (kind == CollKind::Send) return buffer_bytes;
  if (kind == CollKind::Recv || p <= 1) return 0;
  double share = static_cast<double>(p - 1) / p * buffer_bytes;
  return kind == CollKind::AllReduce ? 2 * share : share;
}

std::uint32_t ring_steps(CollKind kind, std::uint32_t p) {
  if (is_p2p(kind)) return 1;
  if (p <= 1) return 0;
  return kind == CollKind::AllReduce ? 2 * (p - 1) : p - 1;
}

std::uint32_t p2p_partner_coord(std::uint32_t own_coord, std::int32_t peer, std::uint32_t size) {
  const auto n = static_cast<std::int64_t>(size);
  return static_cast<std::uint32_t>(((std::int64_t{own_coord} + peer) % n + n) % n);
}

Rank p2p_partner(const ProcessGrid& grid, Rank rank, const Op& op) {
  return grid.group_member(rank, op.dim, p2p_partner_coord(grid.coord(rank, op.dim), op.peer, grid.dim(op.dim).size));
}

// Ring volumes on purpose, whatever the collective algorithm (plan.hpp says why).
std::vector<double> wire_bytes_per_dim(const Plan& plan, Rank rank) {
  std::vector<double> bytes(plan.grid.dims().size(), 0.0);
  for (const auto& op : plan.stream_of(rank).ops) {
    if (op.type == OpType::CollStart) bytes[op.dim] += ring_wire_bytes(op.coll, plan.grid.dim(op.dim).size, op.bytes);
  }
  return bytes;
}

std::vector<std::uint64_t> collectives_per_dim(const Plan& plan, Rank rank) {
  std::vector<std::uint64_t> count(plan.grid.dims().size(), 0);
  for (const auto& op : plan.stream_of(rank).ops) {
    if (op.type == OpType::CollStart && plan.grid.dim(op.dim).size > 1) ++count[op.dim];
  }
  return count;
}

}  // namespace exasim::schedule
