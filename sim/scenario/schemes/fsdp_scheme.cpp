#include "sim/scenario/schemes/fsdp_scheme.hpp"

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schemes/divisors.hpp"

#include <algorithm>
#include <tuple>

namespace exasim::scenario {

namespace {

constexpr const char* kName = "fsdp";
using Config = schedule::FsdpConfig;

const Config& config_of(const Scenario& s) { return parallel_as<Config>(s); }

/// FP8 (modelled as Megatron's Transformer Engine layers only), fsdp_infeasibility, then the plan-size
/// bound (micro-batches x layers <= kMaxLayerPasses).
schedule::Infeasibility refusal_fsdp(const Scenario& s) {
  if (s.training.fp8())
    return {"training.dtype",
            "fp8 is modelled for parallel.scheme megatron (Transformer Engine's FP8 linear "
            "layers); fsdp's layers run bf16, fp16 or fp32"};
  const auto& c = config_of(s);
  if (auto bad = schedule::fsdp_infeasibility(s.model, c, s.training, s.gpus); !bad.why.empty()) return bad;
  return layer_passes_refusal("parallel.micro_batch", schedule::fsdp_micro_batches(c, s.training), s.model.layers,
                              "raise micro_batch");
}

// Rank layout: shard fastest, then replica (fsdp.hpp).
void load_fsdp(const JsonView& parallel, Scenario& s) {
  parallel.check_keys({"scheme", "shard", "micro_batch", "prefetch", "reshard_after_forward"});
  Config c;
  c.shard = parallel.has("shard") ? parallel_degree(parallel, "shard") : s.gpus;
  c.replicas = s.gpus / c.shard;
  // One micro-batch of every sequence of the GPU by default (no gradient accumulation), as FSDP runs.
  const std::int64_t local = s.training.global_batch / s.gpus;
  const auto whole = static_cast<std::uint32_t>(local >= 1 && local <= kMaxGpus ? local : 1);
  c.micro_batch = parallel.has("micro_batch") ? parallel_degree(parallel, "micro_batch") : whole;
  c.prefetch = parallel.boolean_or("prefetch", true);
  c.reshard_after_forward = parallel.boolean_or("reshard_after_forward", true);
  s.parallel = make_config(c);
  if (auto bad = refusal_fsdp(s); !bad.why.empty()) throw InputError(s.source, bad.field, bad.why);
}

nlohmann::json json_fsdp(const SchemeConfig& config) {
  const auto& c = config_as<Config>(config);
  return {{"scheme", kName},
          {"shard", c.shard},
          {"micro_batch", c.micro_batch},
          {"prefetch", c.prefetch},
          {"reshard_after_forward", c.reshard_after_forward}};
}

schedule::Plan uniform_plan_fsdp(const Scenario& s, std::int64_t layers) {
  auto model = s.model;
  model.layers = layers;
  auto plan = schedule::build_fsdp_plan(model, config_of(s), s.training);
  plan.scheme = kName;
  return plan;
}

schedule::Plan plan_fsdp(const Scenario& s) { return uniform_plan_fsdp(s, s.model.layers); }

schedule::MemoryEstimate memory_fsdp(const Scenario& s) {
  return schedule::estimate_fsdp_memory(s.model, config_of(s), s.training);
}

std::vector<LayoutField> describe_fsdp(const Scenario& s) {
  const auto& c = config_of(s);
  return {{"dp", std::int64_t{c.gpus()}},
          {"shard", std::int64_t{c.shard}},
          {"replicas", std::int64_t{c.replicas}},
          {"micro_batch", std::int64_t{c.micro_batch}},
          {"prefetch", c.prefetch},
          {"reshard_after_forward", c.reshard_after_forward}};
}

double rank_layer_passes_fsdp(const Scenario& s) {
  return static_cast<double>(s.model.layers) *
         static_cast<double>(schedule::fsdp_micro_batches(config_of(s), s.training));
}

// shard (whole nodes), micro_batch (divisors of the sequences per GPU), reshard_after_forward, recompute,
// in that nesting order; prefetch as the scenario has it.
void enumerate_fsdp(const Scenario& base, const std::function<void(const TuneChoice&)>& visit) {
  const Config* own = config_if<Config>(base.parallel.get());
  Config c;
  c.prefetch = own ? own->prefetch : true;
  const std::int64_t local = base.training.global_batch / base.gpus;
  // A batch that does not spread over the GPUs still gets its candidates, refused for it.
  const auto batches = local >= 1 ? divisors(static_cast<std::uint64_t>(local)) : std::vector<std::uint32_t>{1};
  for (const auto shard : fsdp_shard_sizes(base.gpus, base.machine.node.gpus)) {
    for (const auto mb : batches) {
      for (const bool reshard : {true, false}) {
        c.shard = shard;
        c.replicas = base.gpus / shard;
        c.micro_batch = mb;
        c.reshard_after_forward = reshard;
        const auto config = make_config(c);
        for (const auto rc : {schedule::Recompute::None, schedule::Recompute::Selective, schedule::Recompute::Full})
          visit({config, rc});
      }
    }
  }
}

// prefetch is left out, as tune.csv leaves it (not searched).
auto key_of(const SchemeConfig& config) {
  const auto& c = config_as<Config>(config);
  return std::make_tuple(c.shard, c.replicas, c.micro_batch, !c.reshard_after_forward);
}

bool less_fsdp(const SchemeConfig& a, const SchemeConfig& b) { return key_of(a) < key_of(b); }

// prefetch is shown only when off (tune keeps it as the scenario has it).
std::string label_fsdp(const SchemeConfig& config, schedule::Recompute recompute) {
  const auto& c = config_as<Config>(config);
  return "shard=" + std::to_string(c.shard) + " replicas=" + std::to_string(c.replicas) +
         " mb=" + std::to_string(c.micro_batch) + " reshard=" + (c.reshard_after_forward ? "on" : "off") +
         (c.prefetch ? "" : " prefetch=off") + " recompute=" + schedule::to_string(recompute);
}

std::vector<std::string> csv_fsdp(const SchemeConfig& config) {
  const auto& c = config_as<Config>(config);
  return {std::to_string(c.shard), std::to_string(c.replicas), std::to_string(c.micro_batch),
          c.reshard_after_forward ? "true" : "false"};
}

// tune.csv keeps what tune searches; prefetch reads back as its default.
ConfigPtr from_csv_fsdp(const CsvCells& cells) {
  const auto degree = [&](std::string_view column) { return csv_integer(cells, column, 1, kMaxGpus); };
  Config c;
  c.shard = degree("shard");
  c.replicas = degree("replicas");
  c.micro_batch = degree("micro_batch");
  c.reshard_after_forward = csv_bool(cells, "reshard_after_forward");
  return make_config(c);
}

/// Every rank runs the same stream: one rank's replay (analytic.hpp) of every layer, for one and two
/// micro-batches, extended linearly to the configuration's. The micro-batches are alike and each drains
/// its reductions before the next begins, so the line is exact for the replay. Layers are not sampled as
/// AxoNN's estimate samples them: the reductions of the last units stay exposed past the last compute,
/// and with 1 or 2 layers part of that tail overlaps the other layer, so a line through them misses
/// (hybrid llama3-8b-fsdp-64, shard 8: 0.57 s against 0.72 s replayed whole).
class FsdpEstimate final : public SchemeEstimate {
 public:
  void prepare(const Scenario& s, AnalyticMachine& machine) override {
    const auto& c = config_of(s);
    (void)machine.ring_of(1, c.shard);
    (void)machine.ring_of(c.shard, c.replicas);
  }
  double iteration_s(const Scenario& s, AnalyticMachine& machine) override {
    const auto& c = config_of(s);
    const std::int64_t micro_batches = schedule::fsdp_micro_batches(c, s.training);
    auto time_with = [&](std::int64_t m) {
      auto training = s.training;
      training.global_batch = m * c.gpus() * c.micro_batch;
      return machine.replay_s(schedule::build_fsdp_plan(s.model, c, training));
    };
    if (micro_batches <= 2) return time_with(micro_batches);
    const double t1 = time_with(1), t2 = time_with(2);
    return t2 + static_cast<double>(micro_batches - 2) * (t2 - t1);
  }
};

}  // namespace

std::vector<std::uint32_t> fsdp_shard_sizes(std::uint32_t gpus, std::uint32_t gpus_per_node) {
  const std::uint32_t node = std::max<std::uint32_t>(1, std::min(gpus, gpus_per_node));
  std::vector<std::uint32_t> out;
  for (const auto d : divisors(gpus))
    if (d % node == 0) out.push_back(d);
  return out;
}

Scheme fsdp_scheme() {
  return {.name = kName,
          .title = "FSDP",
          .candidate_noun = "configuration",
          .searched = "shard group (whole nodes), micro-batch, resharding after forward, recompute",
          .load = load_fsdp,
          .refusal = refusal_fsdp,
          .to_json = json_fsdp,
          .build_plan = plan_fsdp,
          .memory_per_gpu = memory_fsdp,
          .flops = transformer_flops,
          .describe = describe_fsdp,
          .layer_unit = [](const Scenario&) { return std::uint32_t{1}; },
          .rank_layer_passes = rank_layer_passes_fsdp,
          .enumerate = enumerate_fsdp,
          .searches_recompute = true,
          .less = less_fsdp,
          .label = label_fsdp,
          .csv_columns = {"shard", "replicas", "micro_batch", "reshard_after_forward"},
          .to_csv = csv_fsdp,
          .from_csv = from_csv_fsdp,
          .make_estimate = [] { return std::unique_ptr<SchemeEstimate>(new FsdpEstimate); },
          .uniform_plan = uniform_plan_fsdp};
}

}  // namespace exasim::scenario
