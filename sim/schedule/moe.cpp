#include "sim/schedule/moe.hpp"

#include "sim/core/json_view.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace exasim::schedule {

namespace {

// Keys that only mean something with experts.
constexpr const char* kMoeOnlyKeys[] = {"top_k",          "expert_ffn_hidden",  "shared_experts",
                                        "moe_layer_freq", "first_dense_layers", "capacity_factor",
                                        "expert_skew"};
// 2^14 experts: 64x DeepSeek-V3's 256. A rank's stream holds one GEMM per local expert whose load differs.
constexpr std::int64_t kMaxExperts = 1 << 14;
// s = 8 puts 99.6 % of the copies on the first expert: beyond, every further unit changes nothing a
// simulation could show.
constexpr double kMaxSkew = 8;

}  // namespace

MoeSpec load_moe_spec(const JsonView& v, std::int64_t layers, std::int64_t ffn_hidden) {
  MoeSpec m;
  if (!v.has("experts")) {
    for (const char* key : kMoeOnlyKeys)
      if (v.has(key)) v.fail(key, "applies to a mixture of experts only: set model.experts too");
    return m;
  }
  m.experts = v.integer("experts", 1, kMaxExperts);
  m.top_k = v.integer("top_k", 1, kMaxExperts);
  if (m.top_k > m.experts)
    v.fail("top_k", "must be at most experts (" + std::to_string(m.experts) + "), got " + std::to_string(m.top_k));
  m.expert_ffn = v.integer_or("expert_ffn_hidden", ffn_hidden, 1, 1 << 22);
  m.shared_experts = v.integer_or("shared_experts", 0, 0, kMaxExperts);
  m.layer_freq = v.integer_or("moe_layer_freq", 1, 1, layers);
  m.first_dense_layers = v.integer_or("first_dense_layers", 0, 0, layers - 1);
  if (v.has("capacity_factor")) m.capacity_factor = v.number("capacity_factor", 0, 1e6);
  m.skew = v.number_or("expert_skew", 0, 0, kMaxSkew, /*min_exclusive=*/false);
  return m;
}

std::vector<double> expert_popularity(std::int64_t experts, double skew) {
  std::vector<double> f(static_cast<std::size_t>(experts));
  for (std::size_t e = 0; e < f.size(); ++e) f[e] = std::pow(static_cast<double>(e + 1), -skew);
  const double sum = std::accumulate(f.begin(), f.end(), 0.0);
  for (double& x : f) x /= sum;
  return f;
}

double ExpertRouting::kept() const { return std::accumulate(rank_share.begin(), rank_share.end(), 0.0); }

bool ExpertRouting::balanced() const {
  return std::all_of(rank_share.begin(), rank_share.end(), [&](double w) { return w == rank_share.front(); });
}

double ExpertRouting::max_over_mean() const {
  const double mean = kept() / static_cast<double>(rank_share.size());
  return mean > 0 ? *std::max_element(rank_share.begin(), rank_share.end()) / mean : 1;
}

ExpertRouting route_experts(const MoeSpec& moe, std::uint32_t ep) {
  ExpertRouting r;
  r.expert_share = expert_popularity(moe.experts, moe.skew);
  if (moe.capacity_factor) {
    const double capacity = *moe.capacity_factor / static_cast<double>(moe.experts);
    for (double& share : r.expert_share) share = std::min(share, capacity);
  }
  const auto local = static_cast<std::size_t>(moe.experts / ep);
  r.rank_share.assign(ep, 0.0);
  for (std::size_t e = 0; e < r.expert_share.size(); ++e) r.rank_share[e / local] += r.expert_share[e];
  return r;
}

}  // namespace exasim::schedule
