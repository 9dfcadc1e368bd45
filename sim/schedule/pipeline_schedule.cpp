#include "sim/schedule/internal/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::schedule {

namespace {

using Kind = PipelineStep::Kind;

class StepList {
 public:
  void forward(std::uint32_t chunk, std::uint32_t mb) { steps_.push_back({Kind::Forward, chunk, mb}); }
  void backward(std::uint32_t chunk, std::uint32_t mb) { steps_.push_back({Kind::Backward, chunk, mb}); }
  void comm(bool send_prev, bool recv_prev, bool send_next, bool recv_next) {
    if (!(send_prev || recv_prev || send_next || recv_next)) return;
    steps_.push_back({Kind::Comm, 0, 0, send_prev, recv_prev, send_next, recv_next});
  }
  std::vector<PipelineStep> take() { return std::move(steps_); }

 private:
  std::vector<PipelineStep> steps_;
};

std::vector<PipelineStep> one_f_one_b(std::uint32_t p, std::uint32_t m, std::uint32_t s) {
  const bool first = s == 0, last = s + 1 == p;
  const std::uint32_t warmup = std::min(p - s - 1, m), remaining = m - warmup;
  StepList out;
  for (std::uint32_t i = 0; i < warmup; ++i) {
    out.comm(false, !first, false, false);  // recv_forward
    out.forward(0, i);
    out.comm(false, false, !last, false);  // send_forward
  }
  if (remaining > 0) out.comm(false, !first, false, false);
  for (std::uint32_t i = 0; i < remaining; ++i) {
    out.forward(0, warmup + i);
    out.comm(false, false, !last, !last);  // send_forward_recv_backward
    out.backward(0, i);
    const bool last_iteration = i + 1 == remaining;
    out.comm(!first, !first && !last_iteration, false, false);  // send_backward(_recv_forward)
  }
  for (std::uint32_t i = 0; i < warmup; ++i) {
    out.comm(false, false, false, !last);  // recv_backward
    out.backward(0, remaining + i);
    out.comm(!first, false, false, false);  // send_backward
  }
  return out.take();
}

std::vector<PipelineStep> interleaved(std::uint32_t p, std::uint32_t v, std::uint32_t m, std::uint32_t s) {
  const std::int64_t total = std::int64_t{m} * v, group = std::int64_t{p} * v;
  const bool first_stage = s == 0, last_stage = s + 1 == p;
  // Python's modulo (Megatron indexes with k - (p - 1), which can be negative).
  auto chunk_of = [&](std::int64_t k, bool forward) {
    std::int64_t c = ((k % group + group) % group) / p;
    return static_cast<std::uint32_t>(forward ? c : v - c - 1);
  };
  auto mb_of = [&](std::int64_t k) { return static_cast<std::uint32_t>(k / group * p + k % p); };
  const bool all_warmup = m == p;
  const std::int64_t warmup =
      all_warmup ? total : std::min<std::int64_t>(2 * std::int64_t{p - s - 1} + std::int64_t{v - 1} * p, total);
  const std::int64_t remaining = total - warmup;
  // Whether this stage's chunk is the model's first (no input activation) or last (produces the loss).
  auto is_first_model_chunk = [&](std::uint32_t c) { return first_stage && c == 0; };
  auto is_last_model_chunk = [&](std::uint32_t c) { return last_stage && c == v - 1; };

  StepList out;
  out.comm(false, !first_stage, false, false);  // recv_forward for chunk 0
  for (std::int64_t k = 0; k < warmup; ++k) {
    const std::uint32_t c = chunk_of(k, true);
    out.forward(c, mb_of(k));
    bool recv_prev = !(first_stage && chunk_of(k + 1, true) == 0) && k != total - 1;
    const bool send_next = !is_last_model_chunk(c);
    if (k == warmup - 1 && !all_warmup) {
      out.comm(false, recv_prev, send_next, !last_stage);  // send_forward_backward_recv_forward_backward
    } else {
      out.comm(false, recv_prev, send_next, false);  // send_forward_recv_forward
    }
  }
  for (std::int64_t k = 0; k < remaining; ++k) {
    const std::int64_t fk = k + warmup;
    const std::uint32_t fc = chunk_of(fk, true), bc = chunk_of(k, false);
    out.forward(fc, mb_of(fk));
    out.backward(bc, mb_of(k));
    bool recv_prev = !(first_stage && chunk_of(fk - (p - 1), true) == v - 1);
    const bool recv_next = !(last_stage && chunk_of(k - (p - 1), false) == 0);
    if (k == remaining - 1) recv_prev = false;
    out.comm(!is_first_model_chunk(bc), recv_prev, !is_last_model_chunk(fc), recv_next);
  }
  if (all_warmup) out.comm(false, false, false, !last_stage);  // recv_backward for chunk v-1
  for (std::int64_t k = remaining; k < total; ++k) {
    const std::uint32_t c = chunk_of(k, false);
    out.backward(c, mb_of(k));
    bool recv_next = !(last_stage && chunk_of(k + 1, false) == v - 1) && k != total - 1;
    out.comm(!is_first_model_chunk(c), false, false, recv_next);  // send_backward_recv_backward
  }
  return out.take();
}

}  // namespace

std::vector<PipelineStep> pipeline_schedule(std::uint32_t stages, std::uint32_t virtual_stages,
                                            std::uint32_t micro_batches, std::uint32_t stage) {
  if (stages == 0 || virtual_stages == 0 || micro_batches == 0 || stage >= stages)
    throw std::invalid_argument("pipeline_schedule: bad stage count, chunk count, micro-batch count or stage");
  if (virtual_stages == 1) return one_f_one_b(stages, micro_batches, stage);
  if (micro_batches % stages != 0)
    throw std::invalid_argument("pipeline_schedule: interleaving needs micro-batches divisible by stages");
  return interleaved(stages, virtual_stages, micro_batches, stage);
}

}  // namespace exasim::schedule
