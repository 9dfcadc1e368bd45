#include "traces/op_classes.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

namespace exasim::trace {

namespace {

constexpr std::string_view kPostSkew = "post_skew.";

/// A collective of a group rather than a pairwise transfer or a wait.
bool is_group_collective(const TraceRow& r) {
  return !r.dim.empty() && r.kind != "wait" && r.kind != "send" && r.kind != "recv";
}

/// One collective: its op, dimension, group and the member's count of earlier posts of that op there.
using CollectiveKey = std::tuple<std::string, std::string, std::uint32_t, std::uint32_t>;

/// Per group collective row (index into rows), the key of the collective it is a member's part of.
std::vector<std::pair<std::size_t, CollectiveKey>> collective_keys(const std::vector<TraceRow>& rows,
                                                                   const GroupOf& group_of) {
  // Posts counted in each rank's own time order, whatever the rows' order.
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(rows[a].rank, rows[a].t_start_s) < std::tie(rows[b].rank, rows[b].t_start_s);
  });
  std::map<std::tuple<std::uint32_t, std::string, std::string>, std::uint32_t> posts;  // rank, op, dim
  std::vector<std::pair<std::size_t, CollectiveKey>> keys;
  for (const std::size_t i : order) {
    const auto& r = rows[i];
    if (!is_group_collective(r)) continue;
    const std::uint32_t k = posts[{r.rank, r.op, r.dim}]++;
    keys.emplace_back(i, CollectiveKey{r.op, r.dim, group_of(r.rank, r.dim), k});
  }
  return keys;
}

}  // namespace

bool is_post_skew(std::string_view op_class) { return op_class.substr(0, kPostSkew.size()) == kPostSkew; }

std::map<std::string, double> op_class_times(const std::vector<TraceRow>& rows, const GroupOf& group_of) {
  std::map<std::string, double> sum;
  std::set<std::uint32_t> ranks;
  for (const auto& r : rows) {
    ranks.insert(r.rank);
    const double d = r.t_end_s - r.t_start_s;
    if (r.dim.empty())
      sum["compute"] += d;
    else if (r.kind == "wait")
      sum["exposed_comm"] += d;
    else
      sum[r.kind + "." + r.dim] += d;
  }
  if (group_of) {
    // Each group collective's last post; a member's skew is how long it had posted before it.
    const auto keys = collective_keys(rows, group_of);
    std::map<CollectiveKey, double> last_post;
    for (const auto& [i, key] : keys) {
      auto [it, fresh] = last_post.try_emplace(key, rows[i].t_start_s);
      if (!fresh) it->second = std::max(it->second, rows[i].t_start_s);
    }
    for (const auto& [i, key] : keys)
      sum[std::string(kPostSkew) + rows[i].dim] += std::min(last_post[key], rows[i].t_end_s) - rows[i].t_start_s;
  }
  const double n = std::max<double>(1, static_cast<double>(ranks.size()));
  for (auto& [name, value] : sum) value /= n;
  return sum;
}

}  // namespace exasim::trace
