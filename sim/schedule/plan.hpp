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

#include "sim/gpu/kernel.hpp"
#include "sim/schedule/grid.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exasim::schedule {

enum class OpType : std::uint8_t { Compute, CollStart, Wait };
enum class CollKind : std::uint8_t { AllReduce, AllGather, ReduceScatter, Send, Recv };
[[nodiscard]] inline bool is_p2p(CollKind k) { return k == CollKind::Send || k == CollKind::Recv; }
enum class Phase : std::uint8_t { Forward, Recompute, Backward, Optimizer };

[[nodiscard]] std::string_view to_string(CollKind kind);
[[nodiscard]] std::string_view to_string(Phase phase);

/// Bytes one member sends on the wire for a ring collective over p members of an S-byte buffer
/// (S is the full buffer: the gathered output of an all-gather, the input of a reduce-scatter).
/// Send: S (whatever p); Recv: 0.
[[nodiscard]] double ring_wire_bytes(CollKind kind, std::uint32_t p, double buffer_bytes);
/// Number of sequential ring steps (each pays a latency): 2(p-1) for all-reduce, 1 for Send/Recv,
/// p-1 otherwise.
[[nodiscard]] std::uint32_t ring_steps(CollKind kind, std::uint32_t p);

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
  std::vector<gpu::Kernel> kernels;     ///< distinct kernel descriptors, shared by all streams
  std::vector<std::string> names;       ///< op names ("L3.qkv.fwd.gemm")

  [[nodiscard]] const OpStream& stream_of(Rank rank) const {
    return streams[role_dim ? grid.coord(rank, *role_dim) : 0];
  }
};

/// The rank a Send/Recv `op` of `rank` transfers with: p2p_partner_coord() along op.dim, every other
/// coordinate equal.
[[nodiscard]] Rank p2p_partner(const ProcessGrid& grid, Rank rank, const Op& op);

/// Bytes `rank` sends on the wire per grid dimension under ring algorithms, from the plan alone. Stays
/// ring-based whatever `collectives.algorithm` a scenario picks (the MPI emulation relies on it): a
/// hierarchical or direct collective sends the same bytes per member, a tree all-reduce does not (a
/// member sends S/2 per tree edge it sits on); sim/collectives/algorithm.hpp has each algorithm's closed
/// form.
[[nodiscard]] std::vector<double> wire_bytes_per_dim(const Plan& plan, Rank rank);
/// Number of collectives `rank` takes part in per grid dimension (groups of one member excluded).
[[nodiscard]] std::vector<std::uint64_t> collectives_per_dim(const Plan& plan, Rank rank);

}  // namespace exasim::schedule
