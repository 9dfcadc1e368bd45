#include "sim/scenario/schemes/axonn4d_scheme.hpp"

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schemes/divisors.hpp"
#include "sim/schedule/axonn4d.hpp"

#include <tuple>

namespace exasim::scenario {

namespace {

constexpr const char* kName = "axonn4d";
using Grid = schedule::Axonn4DConfig;

const Grid& grid_of(const Scenario& s) { return parallel_as<Grid>(s); }

schedule::Infeasibility refusal_axonn4d(const Scenario& s) {
  // FP8 is modelled as Transformer Engine's linear layers in Megatron-LM; AxoNN's own layers have no FP8 path.
  if (s.training.fp8())
    return {"training.dtype",
            "fp8 is modelled for parallel.scheme megatron (Transformer Engine's FP8 linear "
            "layers); axonn4d's layers run bf16, fp16 or fp32"};
  return schedule::axonn4d_infeasibility(s.model, grid_of(s), s.training.global_batch);
}

// Rank layout x fastest, then y, z, data (docs/axonn.md section 1).
void load_axonn4d(const JsonView& parallel, Scenario& s) {
  parallel.check_keys({"scheme", "gx", "gy", "gz", "gdata"});
  const Grid a = {parallel_degree(parallel, "gx"), parallel_degree(parallel, "gy"), parallel_degree(parallel, "gz"),
                  parallel_degree(parallel, "gdata")};
  const std::uint64_t product = std::uint64_t{a.gx} * a.gy * a.gz * a.gdata;
  if (product != s.gpus) {
    parallel.fail("gdata", "gx*gy*gz*gdata = " + std::to_string(a.gx) + "*" + std::to_string(a.gy) + "*" +
                               std::to_string(a.gz) + "*" + std::to_string(a.gdata) + " = " + std::to_string(product) +
                               " must equal gpus = " + std::to_string(s.gpus));
  }
  s.parallel = make_config(a);
  if (auto bad = refusal_axonn4d(s); !bad.why.empty()) throw InputError(s.source, bad.field, bad.why);
}

nlohmann::json json_axonn4d(const SchemeConfig& config) {
  const auto& g = config_as<Grid>(config);
  return {{"scheme", kName}, {"gx", g.gx}, {"gy", g.gy}, {"gz", g.gz}, {"gdata", g.gdata}};
}

schedule::Plan uniform_plan_axonn4d(const Scenario& s, std::int64_t layers) {
  auto model = s.model;
  model.layers = layers;
  auto plan = schedule::build_axonn4d_plan(model, grid_of(s), s.training, s.overlap);
  plan.scheme = kName;
  return plan;
}

schedule::Plan plan_axonn4d(const Scenario& s) { return uniform_plan_axonn4d(s, s.model.layers); }

schedule::MemoryEstimate memory_axonn4d(const Scenario& s) {
  return schedule::estimate_axonn4d_memory(s.model, grid_of(s), s.training);
}

// The grid's dimensions as the plan names them (x, y, z, data), prefixed with g as in the scenario.
std::vector<LayoutField> describe_axonn4d(const Scenario& s) {
  const auto& a = grid_of(s);
  return {{"gx", std::int64_t{a.gx}},
          {"gy", std::int64_t{a.gy}},
          {"gz", std::int64_t{a.gz}},
          {"gdata", std::int64_t{a.gdata}}};
}

void enumerate_axonn4d(const Scenario& base, const std::function<void(const TuneChoice&)>& visit) {
  for (const auto& grid : axonn4d_grids(base.gpus)) visit({make_config(grid), base.training.recompute});
}

bool less_axonn4d(const SchemeConfig& a, const SchemeConfig& b) {
  const auto& x = config_as<Grid>(a);
  const auto& y = config_as<Grid>(b);
  return std::tie(x.gx, x.gy, x.gz, x.gdata) < std::tie(y.gx, y.gy, y.gz, y.gdata);
}

// Recompute is the scenario's, never searched: the label leaves it out.
std::string label_axonn4d(const SchemeConfig& config, schedule::Recompute) {
  const auto& g = config_as<Grid>(config);
  return "gx=" + std::to_string(g.gx) + " gy=" + std::to_string(g.gy) + " gz=" + std::to_string(g.gz) +
         " gdata=" + std::to_string(g.gdata);
}

std::vector<std::string> csv_axonn4d(const SchemeConfig& config) {
  const auto& g = config_as<Grid>(config);
  return {std::to_string(g.gx), std::to_string(g.gy), std::to_string(g.gz), std::to_string(g.gdata)};
}

ConfigPtr from_csv_axonn4d(const CsvCells& cells) {
  const auto degree = [&](std::string_view column) { return csv_integer(cells, column, 1, kMaxGpus); };
  return make_config(Grid{degree("gx"), degree("gy"), degree("gz"), degree("gdata")});
}

/// Every rank runs the same stream: one rank's replay of 1 and 2 layers, extrapolated (analytic.hpp).
class Axonn4DEstimate final : public SchemeEstimate {
 public:
  void prepare(const Scenario& s, AnalyticMachine& machine) override {
    const auto& g = grid_of(s);
    const schedule::ProcessGrid pg({{"x", g.gx}, {"y", g.gy}, {"z", g.gz}, {"data", g.gdata}});
    for (const auto& dim : pg.dims()) (void)machine.ring_of(dim.stride, dim.size);
  }
  double iteration_s(const Scenario& s, AnalyticMachine& machine) override {
    const std::int64_t layers = s.model.layers;
    auto time_with = [&](std::int64_t l) { return machine.replay_s(uniform_plan_axonn4d(s, l)); };
    if (layers <= 2) return time_with(layers);
    const double t1 = time_with(1), t2 = time_with(2);
    return t2 + static_cast<double>(layers - 2) * (t2 - t1);
  }
};

}  // namespace

std::vector<Grid> axonn4d_grids(std::uint32_t gpus) {
  std::vector<Grid> out;
  for (auto gx : divisors(gpus))
    for (auto gy : divisors(gpus / gx))
      for (auto gz : divisors(gpus / gx / gy)) out.push_back({gx, gy, gz, gpus / gx / gy / gz});
  return out;
}

Scheme axonn4d_scheme() {
  return {.name = kName,
          .title = "AxoNN 4D",
          .candidate_noun = "grid",
          .searched = "4D grids",
          .load = load_axonn4d,
          .refusal = refusal_axonn4d,
          .to_json = json_axonn4d,
          .build_plan = plan_axonn4d,
          .memory_per_gpu = memory_axonn4d,
          .flops = transformer_flops,
          .describe = describe_axonn4d,
          .layer_unit = [](const Scenario&) { return std::uint32_t{1}; },
          .rank_layer_passes = [](const Scenario& s) { return static_cast<double>(s.model.layers); },
          .enumerate = enumerate_axonn4d,
          .searches_recompute = false,
          .less = less_axonn4d,
          .label = label_axonn4d,
          .csv_columns = {"gx", "gy", "gz", "gdata"},
          .to_csv = csv_axonn4d,
          .from_csv = from_csv_axonn4d,
          .make_estimate = [] { return std::unique_ptr<SchemeEstimate>(new Axonn4DEstimate); },
          .uniform_plan = uniform_plan_axonn4d};
}

}  // namespace exasim::scenario
