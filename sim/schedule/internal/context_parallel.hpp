#pragma once
// The attention core of one layer on a context-parallel rank, as ops of a stream: the steps, transfers
// and collectives context_parallel.hpp describes. With cp = 1 the forward and backward are the plain
// attention kernels (layer_kernels.hpp), with no communication.

#include "sim/schedule/context_parallel.hpp"
#include "sim/schedule/internal/layer_kernels.hpp"
#include "sim/schedule/stream_builder.hpp"

#include <string>

namespace exasim::schedule {

struct CpAttention {
  std::uint32_t cp = 1;
  CpComm comm = CpComm::P2p;
  std::uint8_t dim = 0;       ///< the grid dimension of the CP group
  AttentionSlice local;       ///< the rank's share: seq/cp tokens, its TP shard's heads
  double kv_block_bytes = 0;  ///< one rank's K and V (kv_block_bytes())
};

/// The attention forward of a layer, named `name` (transfers and collectives get suffixes); the
/// caller has set the phase (forward or recompute).
void cp_attention_forward(StreamBuilder& out, const LayerKernels& kernels, const CpAttention& a,
                          const std::string& name);
/// The attention backward of a layer.
void cp_attention_backward(StreamBuilder& out, const LayerKernels& kernels, const CpAttention& a,
                           const std::string& name);

}  // namespace exasim::schedule
