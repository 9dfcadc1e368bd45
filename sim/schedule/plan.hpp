#pragma once
// A plan: what every rank does in one training iteration, as data.
//
// Ranks of the same role share one op stream (for AxoNN 4D every rank has the same role); per-rank
// state in a runtime is then a program counter and a few handle slots, so 32k ranks cost little memory.
// An op is one of:
//  - Compute: run a kernel (descriptor in `kernels`, costed by the runtime's GPU model);
//  - CollStart: post a non-blocking collective on the rank's group along a grid dimension, writing a
//    handle into `slot`;
//  - Wait: block until the collective in `slot` has completed on this rank (it repeats that
//    collective's name, kind, dimension and bytes, for reports).
// A blocking collective is a CollStart immediately followed by its Wait. Members of a group post their
// collectives in the same order, which is how runtimes match them.
//
// Point-to-point (pipeline activations and gradients) uses the same CollStart/Wait pair with kind Send or
// Recv: the partner is the rank whose coordinate along `dim` is (own + peer) modulo the dimension's size,
// all other coordinates equal. The k-th Send from a to b matches the k-th Recv at b from a (MPI order).
// The transfer is one flow of `bytes` from sender to receiver that starts once both have posted
// (rendezvous, as NCCL send/recv), pays one route latency, and completes both handles together.
//
// All-to-all (a mixture of experts' token dispatch and combine) is a collective of its group with a
// per-pair volume: member i sends member j (j != i) S x w_j (AllToAll: each member splits its buffer S by
// the receivers' shares w) or S x w_i (AllToAllReverse: each member returns its own share to every
// other member, the reverse of an AllToAll). The shares of a dimension are Plan::all_to_all_shares[dim]
// (one per member coordinate, summing to at most 1); none there means uniform, w = 1/p, where both kinds
// send S/p to each other member, (p-1)/p S in all.

#include "sim/gpu/kernel.hpp"
#include "sim/schedule/grid.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::schedule {

enum class OpType : std::uint8_t { Compute, CollStart, Wait };
enum class CollKind : std::uint8_t { AllReduce, AllGather, ReduceScatter, Send, Recv, AllToAll, AllToAllReverse };
[[nodiscard]] inline bool is_p2p(CollKind k) { return k == CollKind::Send || k == CollKind::Recv; }
[[nodiscard]] inline bool is_all_to_all(CollKind k) {
  return k == CollKind::AllToAll || k == CollKind::AllToAllReverse;
}
enum class Phase : std::uint8_t { Forward, Recompute, Backward, Optimizer };

[[nodiscard]] std::string_view to_string(CollKind kind);
/// The kind whose to_string() is `name`; nullopt for any other text (the loaders check it with a choice).
[[nodiscard]] std::optional<CollKind> coll_kind_of(std::string_view name);
[[nodiscard]] std::string_view to_string(Phase phase);

/// Bytes one member sends on the wire for a ring collective over p members of an S-byte buffer
/// (S is the full buffer: the gathered output of an all-gather, the input of a reduce-scatter).
/// Send: S (whatever p); Recv: 0; an all-to-all under uniform shares: (p-1)/p S (no ring runs it: the
/// direct exchange's bytes).
[[nodiscard]] double ring_wire_bytes(CollKind kind, std::uint32_t p, double buffer_bytes);
/// Number of sequential ring steps (each pays a latency): 2(p-1) for all-reduce, 1 for Send/Recv and
/// all-to-all, p-1 otherwise.
[[nodiscard]] std::uint32_t ring_steps(CollKind kind, std::uint32_t p);

/// Bytes member `from` sends member `to` (both in [0, p), different) in an all-to-all of `kind` over an
/// S-byte buffer: S x shares[to] (AllToAll) or S x shares[from] (AllToAllReverse); shares null: S/p.
[[nodiscard]] double all_to_all_pair_bytes(CollKind kind, std::uint32_t p, double S, const double* shares,
                                           std::uint32_t from, std::uint32_t to);
/// Bytes `member` sends in all: the sum over the p-1 others.
[[nodiscard]] double all_to_all_wire_bytes(CollKind kind, std::uint32_t p, double S, const double* shares,
                                           std::uint32_t member);

/// The coordinate of a Send/Recv partner along a dimension of `size` members: (own + peer) modulo
/// size, always in [0, size). The one formula every runtime pairs transfers with (MPI ranks of the
/// dimension's communicator are these coordinates).
[[nodiscard]] std::uint32_t p2p_partner_coord(std::uint32_t own_coord, std::int32_t peer, std::uint32_t size);

struct Op {
  OpType type = OpType::Compute;
  Phase phase = Phase::Forward;
  CollKind coll = CollKind::AllReduce;  ///< CollStart only
  std::uint8_t dim = 0;                 ///< CollStart: grid dimension of the group
  std::int16_t peer = 0;                ///< Send/Recv: partner's offset along `dim` (modulo its size)
  std::uint16_t slot = 0;               ///< CollStart / Wait: handle slot
  std::uint32_t name = 0;               ///< index into Plan::names
  std::uint32_t kernel = 0;             ///< Compute: index into Plan::kernels
  double bytes = 0;                     ///< CollStart: full buffer size S in bytes
};

struct OpStream {
  std::vector<Op> ops;
  std::uint16_t slots = 0;  ///< handle slots a rank needs for this stream
};

struct Plan {
  std::string scheme;  ///< the scheme table's name for it (set by the entry: sim/scenario/scheme.hpp)
  ProcessGrid grid{{}};
  std::vector<OpStream> streams;        ///< one per role
  std::optional<std::size_t> role_dim;  ///< role = coordinate along this dimension; none: one role
  /// With role_dim: a second dimension the roles split by, role = coord(role_dim) x its size +
  /// coord(role_subdim) (a mixture of experts' ranks whose experts carry different loads).
  std::optional<std::size_t> role_subdim;
  std::vector<gpu::Kernel> kernels;  ///< distinct kernel descriptors, shared by all streams
  std::vector<std::string> names;    ///< op names ("L3.qkv.fwd.gemm")
  /// Per grid dimension, the all-to-all shares of its members (header); empty or absent: uniform.
  std::vector<std::vector<double>> all_to_all_shares;

  [[nodiscard]] std::size_t role_of(Rank rank) const {
    if (!role_dim) return 0;
    const std::size_t role = grid.coord(rank, *role_dim);
    return role_subdim ? role * grid.dim(*role_subdim).size + grid.coord(rank, *role_subdim) : role;
  }
  [[nodiscard]] const OpStream& stream_of(Rank rank) const { return streams[role_of(rank)]; }
  /// The all-to-all shares along `dim`, or null when uniform.
  [[nodiscard]] const double* shares_of(std::size_t dim) const {
    return dim < all_to_all_shares.size() && !all_to_all_shares[dim].empty() ? all_to_all_shares[dim].data() : nullptr;
  }
};

/// The rank a Send/Recv `op` of `rank` transfers with: p2p_partner_coord() along op.dim, every other
/// coordinate equal.
[[nodiscard]] Rank p2p_partner(const ProcessGrid& grid, Rank rank, const Op& op);

/// Bytes `rank` sends on the wire per grid dimension under ring algorithms, from the plan alone. Stays
/// ring-based whatever `collectives.algorithm` a scenario picks (the MPI emulation relies on it): a
/// hierarchical or direct collective sends the same bytes per member, a tree all-reduce does not (a
/// member sends S/2 per tree edge it sits on); sim/collectives/algorithm.hpp has each algorithm's closed
/// form. All-to-alls count what the rank sends under the dimension's shares (all_to_all_wire_bytes).
[[nodiscard]] std::vector<double> wire_bytes_per_dim(const Plan& plan, Rank rank);
/// Per grid dimension, whether any stream posts an all-to-all on it.
[[nodiscard]] std::vector<bool> all_to_all_dims(const Plan& plan);
/// Number of collectives `rank` takes part in per grid dimension (groups of one member excluded).
[[nodiscard]] std::vector<std::uint64_t> collectives_per_dim(const Plan& plan, Rank rank);

}  // namespace exasim::schedule
