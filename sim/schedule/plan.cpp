#include "sim/schedule/plan.hpp"

namespace exasim::schedule {

std::string_view to_string(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce: return "all_reduce";
    case CollKind::AllGather: return "all_gather";
    case CollKind::ReduceScatter: return "reduce_scatter";
    case CollKind::Send: return "send";
    case CollKind::Recv: return "recv";
    case CollKind::AllToAll: return "all_to_all";
    case CollKind::AllToAllReverse: return "all_to_all_reverse";
  }
  return "?";
}

std::optional<CollKind> coll_kind_of(std::string_view name) {
  for (const CollKind k : {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter, CollKind::Send,
                           CollKind::Recv, CollKind::AllToAll, CollKind::AllToAllReverse})
    if (to_string(k) == name) return k;
  return std::nullopt;
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
  if (is_all_to_all(kind)) return 1;
  return kind == CollKind::AllReduce ? 2 * (p - 1) : p - 1;
}

double all_to_all_pair_bytes(CollKind kind, std::uint32_t p, double S, const double* shares, std::uint32_t from,
                             std::uint32_t to) {
  if (shares == nullptr) return S / p;
  return S * shares[kind == CollKind::AllToAllReverse ? from : to];
}

double all_to_all_wire_bytes(CollKind kind, std::uint32_t p, double S, const double* shares, std::uint32_t member) {
  if (shares == nullptr) return ring_wire_bytes(kind, p, S);
  double bytes = 0;
  for (std::uint32_t j = 0; j < p; ++j)
    if (j != member) bytes += all_to_all_pair_bytes(kind, p, S, shares, member, j);
  return bytes;
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
    if (op.type != OpType::CollStart) continue;
    const std::uint32_t p = plan.grid.dim(op.dim).size;
    bytes[op.dim] +=
        is_all_to_all(op.coll) && p > 1
            ? all_to_all_wire_bytes(op.coll, p, op.bytes, plan.shares_of(op.dim), plan.grid.coord(rank, op.dim))
            : ring_wire_bytes(op.coll, p, op.bytes);
  }
  return bytes;
}

std::vector<bool> all_to_all_dims(const Plan& plan) {
  std::vector<bool> dims(plan.grid.dims().size(), false);
  for (const auto& stream : plan.streams)
    for (const auto& op : stream.ops)
      if (op.type == OpType::CollStart && is_all_to_all(op.coll)) dims[op.dim] = true;
  return dims;
}

std::vector<std::uint64_t> collectives_per_dim(const Plan& plan, Rank rank) {
  std::vector<std::uint64_t> count(plan.grid.dims().size(), 0);
  for (const auto& op : plan.stream_of(rank).ops) {
    if (op.type == OpType::CollStart && plan.grid.dim(op.dim).size > 1) ++count[op.dim];
  }
  return count;
}

}  // namespace exasim::schedule
