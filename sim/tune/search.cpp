#include "sim/tune/search.hpp"

#include "sim/scenario/schemes/megatron_scheme.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <tuple>

namespace exasim::tune {

namespace {

/// The divisors of n up to 2^32 - 1, ascending (trial division up to sqrt n: global_batch may be 2^40).
std::vector<std::uint32_t> divisors(std::uint64_t n) {
  std::vector<std::uint32_t> low, high;
  for (std::uint64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(static_cast<std::uint32_t>(d));
    if (d != n / d && n / d <= UINT32_MAX) high.push_back(static_cast<std::uint32_t>(n / d));
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

auto grid_key(const schedule::Axonn4DConfig& g) { return std::make_tuple(g.gx, g.gy, g.gz, g.gdata); }

auto config_key(const Candidate& c) {
  const auto& m = c.megatron;
  const bool megatron = c.scheme == scenario::SchemeId::Megatron;
  const auto zeros = std::make_tuple(0U, 0U, 0U, 0U);
  return std::make_tuple(
      static_cast<int>(c.scheme), megatron ? zeros : grid_key(c.axonn),
      megatron ? std::make_tuple(m.tp, m.pp, m.dp, m.zero) : zeros,
      megatron ? std::make_tuple(m.micro_batch, m.virtual_stages, m.sequence_parallel) : std::make_tuple(0U, 0U, false),
      static_cast<int>(c.recompute));
}

/// The scenario struct of `c` (scheme, config, recompute), the resolved JSON left as it is.
void apply(scenario::Scenario& s, const Candidate& c) {
  s.scheme = c.scheme;
  s.training.recompute = c.recompute;
  if (c.scheme == scenario::SchemeId::Megatron)
    s.megatron = c.megatron;
  else
    s.axonn = c.axonn;
}

/// Fastest estimate first; ties in configuration order (config_less), so the ranking is deterministic.
void rank_by_estimate(std::vector<Candidate>& ranked) {
  std::sort(ranked.begin(), ranked.end(), [](const Candidate& a, const Candidate& b) {
    return a.analytic_s < b.analytic_s || (a.analytic_s == b.analytic_s && config_less(a, b));
  });
}

/// The memory model's bytes per GPU for `s`, or nullopt with the refusal counted under "memory" when
/// they exceed the GPU's HBM.
std::optional<double> memory_that_fits(const scenario::Scenario& s, SearchResult& out) {
  const double memory = scenario::memory_per_gpu(s).total();
  if (memory > s.machine.gpu_choice.device.hbm_capacity_bytes.value) {
    ++out.refused["memory"];
    return std::nullopt;
  }
  return memory;
}

/// Estimates every fitting configuration (the estimates timed on their own: the rate tune reports) and
/// ranks them.
void estimate_and_rank(const scenario::Scenario& base, AnalyticModel& model, std::vector<Candidate> fitting,
                       SearchResult& out) {
  scenario::Scenario s = base;
  const auto start = std::chrono::steady_clock::now();
  for (auto& c : fitting) {
    apply(s, c);
    c.analytic_s = model.iteration_s(s);
  }
  out.analytic_wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.fitting += fitting.size();
  out.ranked.insert(out.ranked.end(), fitting.begin(), fitting.end());
  rank_by_estimate(out.ranked);
}

std::vector<double> ranks_of(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = (static_cast<double>(i + j) / 2) + 1;
    i = j + 1;
  }
  return rank;
}

}  // namespace

std::vector<schedule::Axonn4DConfig> axonn4d_grids(std::uint32_t gpus) {
  std::vector<schedule::Axonn4DConfig> out;
  for (auto gx : divisors(gpus))
    for (auto gy : divisors(gpus / gx))
      for (auto gz : divisors(gpus / gx / gy)) out.push_back({gx, gy, gz, gpus / gx / gy / gz});
  return out;
}

SearchResult search_axonn4d(const scenario::Scenario& base, AnalyticModel& model) {
  SearchResult out;
  scenario::Scenario s = base;
  s.scheme = scenario::SchemeId::Axonn4D;
  std::vector<Candidate> fitting;
  for (const auto& grid : axonn4d_grids(base.gpus)) {
    ++out.considered;
    if (auto bad = schedule::axonn4d_infeasibility(base.model, grid, base.training.global_batch); !bad.why.empty()) {
      ++out.refused[bad.field];
      continue;
    }
    s.axonn = grid;
    const auto memory = memory_that_fits(s, out);
    if (!memory) continue;
    Candidate c;
    c.axonn = grid;
    c.recompute = base.training.recompute;
    c.memory_bytes = *memory;
    fitting.push_back(c);
  }
  // The machine's rings first (routes of every rank, once per dimension shape), then the estimates.
  const auto setup_start = std::chrono::steady_clock::now();
  for (const auto& c : fitting) {
    const auto& g = c.axonn;
    const schedule::ProcessGrid pg({{"x", g.gx}, {"y", g.gy}, {"z", g.gz}, {"data", g.gdata}});
    for (const auto& dim : pg.dims()) (void)model.ring(dim.stride, dim.size);
  }
  out.ring_setup_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
  estimate_and_rank(base, model, std::move(fitting), out);
  return out;
}

SearchResult search_megatron(const scenario::Scenario& base, AnalyticModel& model) {
  SearchResult out;
  scenario::Scenario s = base;
  s.scheme = scenario::SchemeId::Megatron;
  const auto batches = divisors(static_cast<std::uint64_t>(base.training.global_batch));
  const auto chunks = divisors(static_cast<std::uint64_t>(base.model.layers));
  std::vector<Candidate> fitting;
  Candidate c;
  c.scheme = scenario::SchemeId::Megatron;
  c.megatron = base.megatron;  // scatter_gather, grad_accumulation_fusion, tp_comm_overlap
  auto& m = c.megatron;
  for (auto tp : divisors(base.gpus)) {
    for (auto pp : divisors(base.gpus / tp)) {
      // ZeRO over one data-parallel rank shards nothing: only stage 0 is a distinct layout there.
      const std::uint32_t last_zero = base.gpus / tp / pp > 1 ? 3 : 0;
      for (std::uint32_t zero = 0; zero <= last_zero; ++zero) {
        for (auto mb : batches) {
          for (auto v : chunks) {
            for (const bool sp : {false, true}) {
              if (sp && tp == 1) continue;  // nothing to shard: the same configuration as without
              for (const auto rc :
                   {schedule::Recompute::None, schedule::Recompute::Selective, schedule::Recompute::Full}) {
                m.tp = tp;
                m.pp = pp;
                m.dp = base.gpus / tp / pp;
                m.zero = zero;
                m.micro_batch = mb;
                m.virtual_stages = v;
                m.sequence_parallel = sp;
                c.recompute = rc;
                apply(s, c);
                ++out.considered;
                if (auto bad = scenario::megatron_refusal(s); !bad.why.empty()) {
                  ++out.refused[bad.field];
                  continue;
                }
                if (const auto memory = memory_that_fits(s, out)) {
                  c.memory_bytes = *memory;
                  fitting.push_back(c);
                }
              }
            }
          }
        }
      }
    }
  }
  const auto setup_start = std::chrono::steady_clock::now();
  for (const auto& f : fitting) {
    apply(s, f);
    model.prepare_megatron(s);
  }
  out.ring_setup_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
  estimate_and_rank(base, model, std::move(fitting), out);
  return out;
}

SearchResult search(const scenario::Scenario& base, AnalyticModel& model, SchemeChoice choice) {
  if (choice == SchemeChoice::Axonn4D) return search_axonn4d(base, model);
  if (choice == SchemeChoice::Megatron) return search_megatron(base, model);
  SearchResult out = search_axonn4d(base, model);
  SearchResult meg = search_megatron(base, model);
  std::map<std::string, std::uint64_t> refused;
  for (const auto& [reason, n] : out.refused) refused["axonn4d " + reason] += n;
  for (const auto& [reason, n] : meg.refused) refused["megatron " + reason] += n;
  out.refused = std::move(refused);
  out.considered += meg.considered;
  out.fitting += meg.fitting;
  out.analytic_wall_s += meg.analytic_wall_s;
  out.ring_setup_wall_s += meg.ring_setup_wall_s;
  out.ranked.insert(out.ranked.end(), meg.ranked.begin(), meg.ranked.end());
  rank_by_estimate(out.ranked);
  return out;
}

scenario::Scenario with_config(const scenario::Scenario& base, const Candidate& c) {
  if (c.scheme == scenario::SchemeId::Axonn4D && c.recompute == base.training.recompute)
    return with_grid(base, c.axonn);
  scenario::Scenario s = base;
  apply(s, c);
  if (c.recompute != base.training.recompute) s.resolved["training"]["recompute"] = schedule::to_string(c.recompute);
  if (c.scheme == scenario::SchemeId::Axonn4D) {
    s.resolved["parallel"] = with_grid(base, c.axonn).resolved["parallel"];
    return s;
  }
  const auto& m = c.megatron;
  s.resolved["parallel"] = {{"scheme", "megatron"},
                            {"tp", m.tp},
                            {"pp", m.pp},
                            {"dp", m.dp},
                            {"zero", m.zero},
                            {"micro_batch", m.micro_batch},
                            {"virtual_stages", m.virtual_stages},
                            {"sequence_parallel", m.sequence_parallel},
                            {"scatter_gather", m.scatter_gather},
                            {"grad_accumulation_fusion", m.grad_accumulation_fusion}};
  if (m.tp_comm_overlap) s.resolved["parallel"]["tp_comm_overlap"] = true;
  return s;
}

scenario::Scenario with_grid(const scenario::Scenario& base, const schedule::Axonn4DConfig& g) {
  scenario::Scenario s = base;
  s.scheme = scenario::SchemeId::Axonn4D;
  s.axonn = g;
  s.resolved["parallel"] = {{"scheme", "axonn4d"}, {"gx", g.gx}, {"gy", g.gy}, {"gz", g.gz}, {"gdata", g.gdata}};
  return s;
}

std::string grid_label(const schedule::Axonn4DConfig& g) {
  return "gx=" + std::to_string(g.gx) + " gy=" + std::to_string(g.gy) + " gz=" + std::to_string(g.gz) +
         " gdata=" + std::to_string(g.gdata);
}

std::string config_label(const Candidate& c) {
  if (c.scheme == scenario::SchemeId::Axonn4D) return grid_label(c.axonn);
  const auto& m = c.megatron;
  return "tp=" + std::to_string(m.tp) + " pp=" + std::to_string(m.pp) + " dp=" + std::to_string(m.dp) +
         " zero=" + std::to_string(m.zero) + " mb=" + std::to_string(m.micro_batch) +
         " v=" + std::to_string(m.virtual_stages) + " sp=" + (m.sequence_parallel ? "on" : "off") +
         " recompute=" + schedule::to_string(c.recompute);
}

bool config_less(const Candidate& a, const Candidate& b) { return config_key(a) < config_key(b); }

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = a.size();
  if (n < 2 || b.size() != n) return 0;
  const auto ra = ranks_of(a), rb = ranks_of(b);
  const double mean = (static_cast<double>(n) + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

}  // namespace exasim::tune
