#include "sim/tune/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <tuple>

namespace exasim::tune {

namespace {

std::vector<std::uint32_t> divisors(std::uint32_t n) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

auto grid_key(const schedule::Axonn4DConfig& g) { return std::make_tuple(g.gx, g.gy, g.gz, g.gdata); }

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
  const double capacity = base.machine.gpu_choice.device.hbm_capacity_bytes.value;
  scenario::Scenario s = base;
  s.scheme = scenario::SchemeId::Axonn4D;
  std::vector<schedule::Axonn4DConfig> fitting;
  std::vector<double> memories;
  for (const auto& grid : axonn4d_grids(base.gpus)) {
    ++out.considered;
    if (auto bad = schedule::axonn4d_infeasibility(base.model, grid, base.training.global_batch); !bad.why.empty()) {
      ++out.refused[bad.field];
      continue;
    }
    s.axonn = grid;
    const double memory = scenario::memory_per_gpu(s).total();
    if (memory > capacity) {
      ++out.refused["memory"];
      continue;
    }
    fitting.push_back(grid);
    memories.push_back(memory);
  }
  // The machine's rings first (routes of every rank, once per dimension shape), then the estimates.
  const auto setup_start = std::chrono::steady_clock::now();
  for (const auto& g : fitting) {
    const schedule::ProcessGrid pg({{"x", g.gx}, {"y", g.gy}, {"z", g.gz}, {"data", g.gdata}});
    for (const auto& dim : pg.dims()) (void)model.ring(dim.stride, dim.size);
  }
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < fitting.size(); ++i) {
    s.axonn = fitting[i];
    out.ranked.push_back({fitting[i], model.iteration_s(s), memories[i]});
  }
  const auto end = std::chrono::steady_clock::now();
  out.fitting = out.ranked.size();
  out.ring_setup_wall_s = std::chrono::duration<double>(start - setup_start).count();
  out.analytic_wall_s = std::chrono::duration<double>(end - start).count();
  std::sort(out.ranked.begin(), out.ranked.end(), [](const Candidate& a, const Candidate& b) {
    return std::make_tuple(a.analytic_s, grid_key(a.axonn)) < std::make_tuple(b.analytic_s, grid_key(b.axonn));
  });
  return out;
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
