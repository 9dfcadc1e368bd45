#include "sim/cli/tune_run.hpp"

#include "sim/api/layer_sampling.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/schedule/memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>

namespace exasim::cli {

namespace {

constexpr const char* kAllSchemes = "all";

AnalyticAccuracy accuracy_of(const std::vector<TunedConfig>& simulated) {
  AnalyticAccuracy a;
  if (simulated.empty()) return a;
  std::vector<double> analytic, sim;
  for (const auto& c : simulated) {
    analytic.push_back(c.candidate.analytic_s);
    sim.push_back(c.result.iteration_time_s);
    const double error = 100 * (c.candidate.analytic_s - c.result.iteration_time_s) / c.result.iteration_time_s;
    a.mean_error_percent += error;
    a.mean_abs_error_percent += std::abs(error);
    a.max_abs_error_percent = std::max(a.max_abs_error_percent, std::abs(error));
  }
  const auto n = static_cast<double>(simulated.size());
  a.mean_error_percent /= n;
  a.mean_abs_error_percent /= n;
  a.rank_correlation = tune::spearman(analytic, sim);
  return a;
}

bool is_grid_error(const InputError& e) {
  // "gpus": a megatron scenario's tp*pp*dp against the GPUs asked.
  return e.field().rfind("parallel", 0) == 0 || e.field() == "training.global_batch" || e.field() == "model.vocab" ||
         e.field() == "gpus";
}

}  // namespace

std::string no_fit_advice(const TuneOutcome& t) {
  const auto& b = t.base;
  const auto bytes = schedule::param_bytes(b.training);
  const double state = b.model.parameters() * (bytes.weights + bytes.gradients + bytes.optimizer);
  const double capacity = b.machine.gpu_choice.device.hbm_capacity_bytes.value;
  char line[512];
  std::string out = "  nothing fits: no configuration runs on these GPUs. What to change:\n";
  std::uint64_t memory = 0;
  for (const auto& [reason, n] : t.search.refused)
    if (reason.find("memory") != std::string::npos) memory += n;
  if (memory > 0 && capacity > 0) {
    const auto least = static_cast<unsigned long long>(std::ceil(state / capacity));
    std::snprintf(line, sizeof line,
                  "  - memory: %.0f GB of weights, gradients and optimizer state alone (%.0f billion parameters x "
                  "%.0f B),\n    %.1f GB per GPU fully sharded over %u GPUs of %.0f GB, before any activation.\n"
                  "    More GPUs (--set gpus=N; at least %llu hold the state alone), a scheme that shards it\n"
                  "    (--scheme all: ZeRO, FSDP), recomputation, or a smaller micro-batch or global batch\n",
                  state / 1e9, b.model.parameters() / 1e9, bytes.weights + bytes.gradients + bytes.optimizer,
                  state / b.gpus / 1e9, b.gpus, capacity / 1e9, least);
    out += line;
  }
  for (const auto& [reason, n] : t.search.refused) {
    if (reason.find("memory") != std::string::npos) continue;
    out += "  - " + reason + ": " + std::to_string(n) +
           " configurations break its constraint (docs/tune.md); another GPU count or global batch may meet it\n";
  }
  if (t.searched) out += "  - only " + t.scheme + " was searched: --scheme all searches every scheme\n";
  return out;
}

scenario::Scenario load_for_tune(const std::string& path, const std::vector<std::string>& overrides) {
  const auto doc = read_json_file(path);
  try {
    return scenario::parse_scenario(doc, path, overrides);
  } catch (const InputError& first) {
    if (!is_grid_error(first)) throw;
    // The GPU count the point asks: the last override of gpus, else the file's.
    std::uint32_t gpus =
        doc.contains("gpus") && doc["gpus"].is_number_unsigned() ? doc["gpus"].get<std::uint32_t>() : 0;
    for (const auto& o : overrides) {
      const auto a = parse_assignment(o);
      if (a.path == "gpus" && a.value.is_number_unsigned()) gpus = a.value.get<std::uint32_t>();
    }
    scenario::Scenario count_only;
    count_only.gpus = gpus;
    for (const auto& scheme : scenario::schemes()) {
      std::optional<scenario::Scenario> loaded;
      scheme.enumerate(count_only, [&](const scenario::TuneChoice& choice) {
        if (loaded) return;
        auto with_config = overrides;
        with_config.push_back(
            "parallel=" +
            scheme.to_json(*choice.config).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        try {
          loaded = scenario::parse_scenario(doc, path, with_config);
        } catch (const InputError& e) {
          if (!is_grid_error(e)) throw;
        }
      });
      if (loaded) return std::move(*loaded);
    }
    throw;
  }
}

void check_tune_flags(const TuneFlags& flags) {
  if (flags.top < 1 || flags.top > 100000)
    throw InputError("--top", std::to_string(flags.top), "must be a number of grids to simulate from 1 to 100000");
  if (flags.scheme != kAllSchemes && !scenario::find_scheme(flags.scheme))
    throw InputError("--scheme", flags.scheme,
                     "must be " + scenario::scheme_names() + " or all (" +
                         (scenario::schemes().size() == 2 ? "both" : "every one") + ", ranked together)");
}

const scenario::Scheme* scheme_choice(const TuneFlags& flags) { return scenario::find_scheme(flags.scheme); }

std::vector<TuneOutcome> tune_scenarios(const std::vector<scenario::Scenario>& bases, const TuneFlags& flags,
                                        const BatchOptions& batch, std::ostream& log) {
  check_tune_flags(flags);
  std::vector<TuneOutcome> outcomes;
  std::vector<nlohmann::json> docs;
  std::vector<std::vector<TunedConfig>> picked;
  for (const auto& base : bases) {
    TuneOutcome t;
    t.base = base;
    t.scheme = flags.scheme;
    t.searched = scheme_choice(flags);
    tune::AnalyticModel model(base);
    t.search = tune::search(base, model, t.searched);
    std::vector<TunedConfig> top;
    for (std::size_t i = 0; i < t.search.ranked.size() && i < static_cast<std::size_t>(flags.top); ++i) {
      const auto& c = t.search.ranked[i];
      top.push_back({tune::with_config(base, c), c, {}});
      docs.push_back(top.back().scenario.resolved);
      docs.back().erase("job");  // tune ranks iterations; a job object would price each run too (batch.hpp)
    }
    picked.push_back(std::move(top));
    outcomes.push_back(std::move(t));
  }
  // As api::simulate decides it: a model no longer than 2K layers is simulated whole.
  const bool sampled =
      std::any_of(bases.begin(), bases.end(), [](const auto& s) { return api::layer_sampling(s).has_value(); });
  log << "exasim: simulating " << docs.size() << " configurations"
      << (sampled ? " with layer sampling (simulation.sample_layers: approximate)" : " in full") << "\n";
  const auto rows = run_batch(docs, batch, log);
  std::size_t next = 0;
  for (std::size_t b = 0; b < outcomes.size(); ++b) {
    auto& t = outcomes[b];
    for (auto& c : picked[b]) {
      c.result = rows[next++];
      if (c.result.error.empty())
        t.simulated.push_back(std::move(c));
      else
        t.failed.emplace_back(tune::config_label(c.candidate), c.result.error);
    }
    std::sort(t.simulated.begin(), t.simulated.end(), [](const TunedConfig& x, const TunedConfig& y) {
      const double tx = x.result.iteration_time_s, ty = y.result.iteration_time_s;
      return tx < ty || (tx == ty && tune::config_less(x.candidate, y.candidate));
    });
    t.accuracy = accuracy_of(t.simulated);
  }
  return outcomes;
}

TuneOutcome tune_scenario(const scenario::Scenario& base, const TuneFlags& flags, const BatchOptions& batch,
                          std::ostream& log) {
  return std::move(tune_scenarios({base}, flags, batch, log).front());
}

}  // namespace exasim::cli
