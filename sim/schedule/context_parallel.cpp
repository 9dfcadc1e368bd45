#include "sim/schedule/context_parallel.hpp"

#include "sim/schedule/internal/context_parallel.hpp"

#include <string>

namespace exasim::schedule {

namespace {

constexpr std::int16_t kNextRank = +1, kPreviousRank = -1;

/// One ring step: the block(s) of `bytes` go to the next CP rank and come from the previous one while
/// `kernels` run. No bytes: the kernels alone.
void ring_step(StreamBuilder& out, const CpAttention& a, const std::string& name, const char* what, double bytes,
               const std::vector<NamedKernel>& kernels) {
  Handle send = StreamBuilder::kNoHandle, recv = StreamBuilder::kNoHandle;
  if (bytes > 0) {
    send = out.start(name + ".cp_send_" + what, CollKind::Send, a.dim, bytes, kNextRank);
    recv = out.start(name + ".cp_recv_" + what, CollKind::Recv, a.dim, bytes, kPreviousRank);
  }
  out.compute(name, kernels);
  out.wait(send);
  out.wait(recv);
}

}  // namespace

const char* to_string(CpComm comm) { return comm == CpComm::AllGather ? "all_gather" : "p2p"; }

std::optional<CpComm> parse_cp_comm(std::string_view name) {
  for (CpComm c : {CpComm::P2p, CpComm::AllGather})
    if (name == to_string(c)) return c;
  return std::nullopt;
}

Infeasibility context_parallel_infeasibility(const ModelSpec& model, std::uint32_t cp, const TrainingSpec& training) {
  if (cp <= 1) return {};
  if (model.seq_len % (2 * std::int64_t{cp}) != 0)
    return {"parallel.cp", "context parallelism cuts seq_len " + std::to_string(model.seq_len) +
                               " into 2 x cp = " + std::to_string(2 * cp) +
                               " chunks (two per CP rank, for causal load balancing), which must divide it"};
  if (training.attention != AttentionImpl::Flash)
    return {"parallel.cp",
            "context parallelism runs the attention as Transformer Engine's fused (flash) kernels: "
            "it needs training.attention flash, got " +
                std::string(to_string(training.attention))};
  return {};
}

double kv_block_bytes(const ModelSpec& model, std::uint32_t tp, std::uint32_t cp, std::int64_t micro_batch,
                      double element_bytes) {
  const double tokens = static_cast<double>(model.seq_len / cp) * static_cast<double>(micro_batch);
  return 2 * tokens * static_cast<double>(model.kv() / tp) * static_cast<double>(model.head_dim()) * element_bytes;
}

void cp_attention_forward(StreamBuilder& out, const LayerKernels& kernels, const CpAttention& a,
                          const std::string& name) {
  const auto step = kernels.attention_forward(a.local);
  if (a.cp > 1 && a.comm == CpComm::AllGather)
    out.collective(name + ".cp_all_gather_kv", CollKind::AllGather, a.dim, a.cp * a.kv_block_bytes);
  for (std::uint32_t i = 0; i < a.cp; ++i) {
    const bool more = i + 1 < a.cp && a.comm == CpComm::P2p;  // the block of step i + 1 travels now
    ring_step(out, a, name, "kv", more ? a.kv_block_bytes : 0, step);
  }
}

void cp_attention_backward(StreamBuilder& out, const LayerKernels& kernels, const CpAttention& a,
                           const std::string& name) {
  const auto step = kernels.attention_backward(a.local);
  const bool gathered = a.cp > 1 && a.comm == CpComm::AllGather;
  if (gathered) out.collective(name + ".cp_all_gather_kv", CollKind::AllGather, a.dim, a.cp * a.kv_block_bytes);
  for (std::uint32_t i = 0; i < a.cp; ++i) {
    if (a.cp == 1 || gathered) {
      ring_step(out, a, name, "", 0, step);
      continue;
    }
    // K/V for the next step (not after the last), dK/dV of the blocks met so far (not before the first).
    const bool kv = i + 1 < a.cp, dkv = i > 0;
    const char* what = kv && dkv ? "kv_dkv" : kv ? "kv" : "dkv";
    ring_step(out, a, name, what, (kv && dkv ? 2 : 1) * a.kv_block_bytes, step);
  }
  if (gathered)
    out.collective(name + ".cp_reduce_scatter_dkv", CollKind::ReduceScatter, a.dim, a.cp * a.kv_block_bytes);
}

}  // namespace exasim::schedule
