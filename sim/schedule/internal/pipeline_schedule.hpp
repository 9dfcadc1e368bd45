#pragma once
// The order in which one pipeline stage runs forward and backward passes of its model chunks and talks
// to its neighbours, as Megatron-LM's schedules.py does it (Narayanan et al., SC21):
//  - 1F1B (virtual_stages == 1): `forward_backward_pipelining_without_interleaving`: p - s - 1 warm-up
//    forwards on stage s, then one-forward-one-backward, then the cool-down backwards;
//  - interleaved (virtual_stages = v > 1): `forward_backward_pipelining_with_interleaving` without
//    p2p overlap: stage s holds model chunks s, s + p, ..., s + (v-1)p; warm-up of 2(p - s - 1) + (v-1)p
//    chunk-forwards (all of them when m == p), micro-batches taken p at a time per chunk.
// Communication is a sequence of batches, one per Megatron p2p call (recv_forward,
// send_forward_recv_backward, send_forward_backward_recv_forward_backward, ...): the batch's sends and
// receives are posted together and all waited for before the next compute, which is what
// torch.distributed.batch_isend_irecv + wait does. The pipeline bubble is not in here: it emerges when a
// runtime executes these steps on every stage.
//
// "next" is the stage that receives this stage's forward activations (s + 1, and stage 0 for the last
// stage's non-final chunks when interleaving); "prev" the one that sends them.

#include <cstdint>
#include <vector>

namespace exasim::schedule {

struct PipelineStep {
  enum class Kind : std::uint8_t { Forward, Backward, Comm };
  Kind kind = Kind::Comm;
  std::uint32_t chunk = 0;        ///< Forward/Backward: local model chunk (0..v-1)
  std::uint32_t micro_batch = 0;  ///< Forward/Backward
  // Comm: which transfers this batch holds.
  bool send_prev = false;  ///< gradient of the chunk input, to prev
  bool recv_prev = false;  ///< activation, from prev
  bool send_next = false;  ///< activation, to next
  bool recv_next = false;  ///< gradient of the chunk output, from next
};

/// The steps of stage `stage` of `stages` for `micro_batches` micro-batches and `virtual_stages` chunks
/// per stage. Preconditions (std::invalid_argument): stage < stages; with virtual_stages > 1,
/// micro_batches is a multiple of stages (Megatron's requirement for its interleaved schedule).
[[nodiscard]] std::vector<PipelineStep> pipeline_schedule(std::uint32_t stages, std::uint32_t virtual_stages,
                                                          std::uint32_t micro_batches, std::uint32_t stage);

}  // namespace exasim::schedule
