#include "sim/tune/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>

namespace exasim::tune {

namespace {

/// The scenario struct of `c` (scheme, config, recompute), the resolved JSON left as it is.
void apply(scenario::Scenario& s, const Candidate& c) {
  s.scheme = c.scheme;
  s.parallel = c.config;
  s.training.recompute = c.recompute;
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

SearchResult search_scheme(const scenario::Scheme& scheme, const scenario::Scenario& base, AnalyticModel& model) {
  SearchResult out;
  scenario::Scenario s = base;
  std::vector<Candidate> fitting;
  scheme.enumerate(base, [&](const scenario::TuneChoice& choice) {
    const Candidate c{&scheme, choice.config, choice.recompute};
    apply(s, c);
    ++out.considered;
    if (auto bad = scheme.refusal(s); !bad.why.empty()) {
      ++out.refused[bad.field];
      return;
    }
    if (const auto memory = memory_that_fits(s, out)) {
      fitting.push_back(c);
      fitting.back().memory_bytes = *memory;
    }
  });
  // The machine's rings (and a scheme's probe plans) first, then the estimates.
  const auto setup_start = std::chrono::steady_clock::now();
  for (const auto& c : fitting) {
    apply(s, c);
    model.prepare(s);
  }
  out.ring_setup_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
  estimate_and_rank(base, model, std::move(fitting), out);
  return out;
}

SearchResult search(const scenario::Scenario& base, AnalyticModel& model, const scenario::Scheme* only) {
  if (only) return search_scheme(*only, base, model);
  SearchResult out;
  for (const auto& scheme : scenario::schemes()) {
    SearchResult part = search_scheme(scheme, base, model);
    for (const auto& [reason, n] : part.refused) out.refused[std::string(scheme.name) + " " + reason] += n;
    out.considered += part.considered;
    out.fitting += part.fitting;
    out.analytic_wall_s += part.analytic_wall_s;
    out.ring_setup_wall_s += part.ring_setup_wall_s;
    out.ranked.insert(out.ranked.end(), part.ranked.begin(), part.ranked.end());
  }
  rank_by_estimate(out.ranked);
  return out;
}

scenario::Scenario with_config(const scenario::Scenario& base, const Candidate& c) {
  scenario::Scenario s = base;
  apply(s, c);
  if (c.recompute != base.training.recompute) s.resolved["training"]["recompute"] = schedule::to_string(c.recompute);
  s.resolved["parallel"] = c.scheme->to_json(*c.config);
  return s;
}

std::string config_label(const Candidate& c) { return c.scheme->label(*c.config, c.recompute); }

bool config_less(const Candidate& a, const Candidate& b) {
  const auto ia = scenario::scheme_index(*a.scheme), ib = scenario::scheme_index(*b.scheme);
  if (ia != ib) return ia < ib;
  if (a.scheme->less(*a.config, *b.config)) return true;
  if (a.scheme->less(*b.config, *a.config)) return false;
  return a.recompute < b.recompute;
}

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
