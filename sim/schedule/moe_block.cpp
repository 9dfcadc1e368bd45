#include "sim/schedule/internal/moe_block.hpp"

#include <cmath>
#include <numeric>
#include <utility>

namespace exasim::schedule {

namespace {

using gpu::GemmLayout;
using gpu::MemoryFamily;

// Megatron-Core's router keeps its probabilities in fp32 and the top-k indices as int64.
constexpr double kProbabilityBytes = 4;
constexpr double kIndexBytes = 8;

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

Infeasibility megatron_moe_infeasibility(const ModelSpec& m, const MegatronConfig& c) {
  const std::uint32_t etp = c.expert_tp();
  if (!m.moe.enabled()) {
    if (c.ep > 1) return {"parallel.ep", "expert parallelism needs a mixture of experts (model.experts)"};
    if (c.etp != 0 && c.etp != c.tp)
      return {"parallel.etp", "expert tensor parallelism needs a mixture of experts (model.experts)"};
    return {};
  }
  if (m.moe.experts % c.ep != 0)
    return {"parallel.ep", "model experts " + str(m.moe.experts) + " are not divisible by ep = " + str(c.ep) +
                               " (each expert-parallel rank holds experts / ep whole experts)"};
  if (c.tp % etp != 0)
    return {"parallel.etp", "etp = " + str(etp) + " must divide tp = " + str(c.tp) +
                                " (an expert tensor-parallel group sits inside a tensor-parallel one)"};
  // The ranks of a pipeline stage, which the expert groups are carved from (Megatron-Core: tp x cp x dp).
  const std::int64_t stage_ranks = std::int64_t{c.tp} * c.cp * c.dp;
  if (stage_ranks % (std::int64_t{etp} * c.ep) != 0)
    return {"parallel.ep", "etp x ep = " + str(std::int64_t{etp} * c.ep) + " must divide tp x cp x dp = " +
                               str(stage_ranks) + " (with etp = tp: ep must divide cp x dp; the expert-parallel " +
                               "groups are carved out of the data- and context-parallel ranks)"};
  if (m.moe.expert_ffn % etp != 0)
    return {"parallel.etp", "model expert_ffn_hidden " + str(m.moe.expert_ffn) + " is not divisible by etp = " +
                                str(etp) + " (an expert's MLP width is split over expert tensor-parallel ranks)"};
  if (m.moe.shared_ffn() % c.tp != 0)
    return {"parallel.tp", "the shared experts' width " + str(m.moe.shared_ffn()) +
                               " is not divisible by tp = " + str(c.tp) + " (they run as a tensor-parallel MLP)"};
  if (c.tp > 1 && !c.sequence_parallel)
    return {"parallel.sequence_parallel",
            "a mixture of experts with tp > 1 needs sequence parallelism (as Megatron-Core requires: each tensor-"
            "parallel rank routes its own sequence shard)"};
  if (c.zero > 1)
    return {"parallel.zero",
            "ZeRO " + str(c.zero) +
                " with a mixture of experts is not modelled: use 0 or 1 (1 stands for Megatron-Core's "
                "distributed optimizer, which shards expert state over the expert data-parallel ranks)"};
  return {};
}

MoeLayout add_expert_views(ProcessGrid& grid, std::size_t pp_dim, const ModelSpec& model, const MegatronConfig& cfg) {
  MoeLayout l;
  l.ep = cfg.ep;
  l.etp = cfg.expert_tp();
  l.edp = grid.dim(pp_dim).stride / (l.etp * l.ep);
  l.ep_dim = static_cast<std::uint8_t>(grid.add_view("ep", l.etp, l.ep));
  l.edp_dim = static_cast<std::uint8_t>(grid.add_view("edp", l.etp * l.ep, l.edp));
  if (l.etp > 1) l.etp_dim = l.etp == cfg.tp ? 0 : static_cast<std::uint8_t>(grid.add_view("etp", 1, l.etp));
  l.local_experts = model.moe.experts / l.ep;
  l.routing = route_experts(model.moe, l.ep);
  return l;
}

double MoeBlockShape::dispatch_bytes(double e) const {
  return static_cast<double>(tokens) * static_cast<double>(top_k) * static_cast<double>(hidden) * e;
}

double MoeBlockShape::computed_rows() const { return std::accumulate(expert_rows.begin(), expert_rows.end(), 0.0); }

double MoeBlockShape::received_rows() const { return computed_rows() / etp; }

MoeBlockShape moe_block_shape(const ModelSpec& model, const MoeLayout& layout, std::int64_t tokens,
                              std::uint32_t ep_rank) {
  MoeBlockShape s;
  s.hidden = model.hidden;
  s.experts = model.moe.experts;
  s.top_k = model.moe.top_k;
  s.ffn = model.moe.expert_ffn;
  s.up_out = model.activation == Activation::Swiglu ? 2 * s.ffn : s.ffn;
  s.tokens = tokens;
  s.kept = layout.routing.kept();
  s.etp = layout.etp;
  s.ep_dim = layout.ep_dim;
  s.etp_dim = layout.etp_dim;
  const double copies_per_source = static_cast<double>(tokens) * static_cast<double>(s.top_k);
  for (std::int64_t e = 0; e < layout.local_experts; ++e) {
    const double share = layout.routing.expert_share[static_cast<std::size_t>(ep_rank * layout.local_experts + e)];
    s.expert_rows.push_back(static_cast<double>(layout.etp) * layout.ep * copies_per_source * share);
  }
  return s;
}

double MoeBlock::copies() const { return static_cast<double>(s_.tokens) * static_cast<double>(s_.top_k) * s_.kept; }

gpu::Kernel MoeBlock::gemm(std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout) const {
  return gpu::gemm(m, n, k, layout, k_.dtype());
}

template <class Shape>
void MoeBlock::expert_gemms(const std::string& name, std::int64_t cast_width, Shape shape) {
  if (cast_width > 0) {  // named as the dense layers' casts: "L3.expert_up.fwd.fp8_cast"
    out_.compute(name.substr(0, name.rfind('.')), k_.fp8_cast(s_.computed_rows() * static_cast<double>(cast_width)));
  }
  // Experts with equal rows (all of them under uniform routing) share one grouped GEMM, in expert order.
  std::vector<std::pair<std::int64_t, std::int64_t>> groups;  // rows, experts
  for (const double rows : s_.expert_rows) {
    const auto m = static_cast<std::int64_t>(std::llround(rows));
    if (m <= 0) continue;
    if (!groups.empty() && groups.back().first == m)
      ++groups.back().second;
    else
      groups.emplace_back(m, 1);
  }
  for (const auto& [rows, count] : groups) {
    const auto [m, n, k, layout] = shape(rows);
    const auto type = k_.linear_dtype();
    out_.compute(name, count == 1 ? gpu::gemm(m, n, k, layout, type) : gpu::batched_gemm(count, m, n, k, layout, type));
  }
}

void MoeBlock::etp_collective(const std::string& name, CollKind kind) {
  if (s_.etp < 2) return;
  const double rows = s_.computed_rows();
  out_.collective(name, kind, s_.etp_dim, k_.element_bytes() * rows * static_cast<double>(s_.hidden));
}

void MoeBlock::forward(const std::string& layer, const std::string& pass) {
  const double e = k_.element_bytes(), h = static_cast<double>(s_.hidden), n = static_cast<double>(s_.tokens);
  const double E = static_cast<double>(s_.experts), k = static_cast<double>(s_.top_k);
  const std::int64_t ffn = s_.ffn / s_.etp, up = s_.up_out / s_.etp, H = s_.hidden;
  out_.compute(layer + ".router" + pass + ".gemm", gemm(s_.tokens, s_.experts, H, GemmLayout::TN));
  out_.compute(layer + ".router" + pass + ".softmax_topk",
               gpu::memory_kernel(MemoryFamily::Softmax,
                                  n * E * (e + kProbabilityBytes) + n * k * (kProbabilityBytes + kIndexBytes)));
  out_.compute(layer + ".dispatch" + pass + ".permute",
               gpu::memory_kernel(MemoryFamily::Elementwise, e * h * (n + copies())));
  out_.collective(layer + ".dispatch" + pass + ".all_to_all", CollKind::AllToAll, s_.ep_dim, s_.dispatch_bytes(e));
  etp_collective(layer + ".experts" + pass + ".etp_all_gather", CollKind::AllGather);
  expert_gemms(layer + ".expert_up" + pass + ".gemm", H,
               [&](std::int64_t rows) { return std::make_tuple(rows, up, H, GemmLayout::TN); });
  const double rows = s_.computed_rows();
  out_.compute(layer + ".expert_" + (s_.up_out == s_.ffn ? "gelu" : "swiglu") + pass,
               k_.activation_forward(rows * static_cast<double>(ffn)));
  expert_gemms(layer + ".expert_down" + pass + ".gemm", ffn,
               [&](std::int64_t m) { return std::make_tuple(m, H, ffn, GemmLayout::TN); });
  etp_collective(layer + ".experts" + pass + ".etp_reduce_scatter", CollKind::ReduceScatter);
  out_.collective(layer + ".combine" + pass + ".all_to_all", CollKind::AllToAllReverse, s_.ep_dim,
                  s_.dispatch_bytes(e));
  out_.compute(layer + ".combine" + pass + ".unpermute",
               gpu::memory_kernel(MemoryFamily::Elementwise, e * h * (copies() + n) + kProbabilityBytes * copies()));
}

void MoeBlock::backward(const std::string& layer) {
  const std::string pass = ".bwd";
  const double e = k_.element_bytes(), h = static_cast<double>(s_.hidden), n = static_cast<double>(s_.tokens);
  const double E = static_cast<double>(s_.experts);
  const std::int64_t ffn = s_.ffn / s_.etp, up = s_.up_out / s_.etp, H = s_.hidden;
  // Unpermute's backward: each copy's gradient (the token's, scaled by its probability) and the
  // probability's gradient (a dot product with the copy's output, which it reads again).
  out_.compute(
      layer + ".combine" + pass + ".unpermute",
      gpu::memory_kernel(MemoryFamily::Elementwise, e * h * (n + 2 * copies()) + kProbabilityBytes * copies()));
  out_.collective(layer + ".combine" + pass + ".all_to_all", CollKind::AllToAll, s_.ep_dim, s_.dispatch_bytes(e));
  etp_collective(layer + ".experts" + pass + ".etp_all_gather", CollKind::AllGather);
  expert_gemms(layer + ".expert_down" + pass + ".dx_gemm", H,
               [&](std::int64_t rows) { return std::make_tuple(rows, ffn, H, GemmLayout::NN); });
  expert_gemms(layer + ".expert_down" + pass + ".dw_gemm", 0,
               [&](std::int64_t rows) { return std::make_tuple(H, ffn, rows, GemmLayout::NT); });
  const double rows = s_.computed_rows();
  out_.compute(layer + ".expert_" + (s_.up_out == s_.ffn ? "gelu" : "swiglu") + pass,
               k_.activation_backward(rows * static_cast<double>(ffn)));
  expert_gemms(layer + ".expert_up" + pass + ".dx_gemm", up,
               [&](std::int64_t m) { return std::make_tuple(m, H, up, GemmLayout::NN); });
  expert_gemms(layer + ".expert_up" + pass + ".dw_gemm", 0,
               [&](std::int64_t m) { return std::make_tuple(up, H, m, GemmLayout::NT); });
  etp_collective(layer + ".experts" + pass + ".etp_reduce_scatter", CollKind::ReduceScatter);
  out_.collective(layer + ".dispatch" + pass + ".all_to_all", CollKind::AllToAllReverse, s_.ep_dim,
                  s_.dispatch_bytes(e));
  out_.compute(layer + ".dispatch" + pass + ".permute",
               gpu::memory_kernel(MemoryFamily::Elementwise, e * h * (copies() + n)));
  out_.compute(layer + ".router" + pass + ".softmax_topk",
               gpu::memory_kernel(MemoryFamily::Softmax, n * E * (2 * kProbabilityBytes + e)));
  out_.compute(layer + ".router" + pass + ".dx_gemm", gemm(s_.tokens, H, s_.experts, GemmLayout::NN));
  out_.compute(layer + ".router" + pass + ".dw_gemm", gemm(s_.experts, H, s_.tokens, GemmLayout::NT));
}

}  // namespace exasim::schedule
