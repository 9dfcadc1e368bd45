#include "sim/scenario/schemes/megatron_scheme.hpp"

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schemes/divisors.hpp"
#include "sim/schedule/megatron.hpp"

#include <tuple>

namespace exasim::scenario {

namespace {

constexpr const char* kName = "megatron";
using Config = schedule::MegatronConfig;

const Config& config_of(const Scenario& s) { return parallel_as<Config>(s); }

/// Why the config cannot run on `s` (model, training, GPUs): megatron_infeasibility, then the plan-size
/// bound (micro-batches x layers <= kMaxLayerPasses, blamed on training.global_batch).
schedule::Infeasibility refusal_megatron(const Scenario& s) {
  const auto& m = config_of(s);
  if (auto bad = schedule::megatron_infeasibility(s.model, m, s.training, s.gpus); !bad.why.empty()) return bad;
  // Each micro-batch runs every layer of a stage: the plan holds micro-batches x layers passes per
  // rank. 40,000 micro-batches of a 48-layer model (1.9M) took 35 s and 4.4 GB on 2 cores.
  return layer_passes_refusal("training.global_batch", schedule::megatron_micro_batches(m, s.training), s.model.layers,
                              "raise parallel.micro_batch or dp, or lower global_batch");
}

// Rank layout as Megatron-Core's: TP fastest, then CP, then DP, then PP (megatron.hpp).
void load_megatron(const JsonView& parallel, Scenario& s) {
  parallel.check_keys({"scheme", "tp", "cp", "pp", "dp", "zero", "micro_batch", "virtual_stages", "sequence_parallel",
                       "scatter_gather", "grad_accumulation_fusion", "tp_comm_overlap", "cp_comm", "ep", "etp"});
  Config m;
  m.tp = parallel_degree(parallel, "tp");
  m.cp = parallel_degree(parallel, "cp");
  // choice() has checked the name, so the parse cannot fail.
  m.cp_comm = *schedule::parse_cp_comm(parallel.choice("cp_comm", {"p2p", "all_gather"}, "p2p"));
  m.pp = parallel_degree(parallel, "pp");
  m.dp = parallel_degree(parallel, "dp");
  m.zero = static_cast<std::uint32_t>(parallel.integer_or("zero", 0, 0, 3));
  m.micro_batch = parallel_degree(parallel, "micro_batch");
  m.virtual_stages = parallel_degree(parallel, "virtual_stages");
  m.sequence_parallel = parallel.boolean_or("sequence_parallel", false);
  m.scatter_gather = parallel.boolean_or("scatter_gather", true);
  m.grad_accumulation_fusion = parallel.boolean_or("grad_accumulation_fusion", true);
  m.tp_comm_overlap = parallel.boolean_or("tp_comm_overlap", false);
  m.ep = parallel_degree(parallel, "ep");
  // etp equal to tp is the default (0): one layout, one config.
  m.etp = parallel.has("etp") ? parallel_degree(parallel, "etp") : 0;
  if (m.etp == m.tp) m.etp = 0;
  s.parallel = make_config(m);
  if (auto bad = refusal_megatron(s); !bad.why.empty()) throw InputError(s.source, bad.field, bad.why);
}

// tp_comm_overlap is written only when on, cp and cp_comm only with cp > 1 (how every Megatron run before
// them was written).
nlohmann::json json_megatron(const SchemeConfig& config) {
  const auto& m = config_as<Config>(config);
  nlohmann::json out = {{"scheme", kName},
                        {"tp", m.tp},
                        {"pp", m.pp},
                        {"dp", m.dp},
                        {"zero", m.zero},
                        {"micro_batch", m.micro_batch},
                        {"virtual_stages", m.virtual_stages},
                        {"sequence_parallel", m.sequence_parallel},
                        {"scatter_gather", m.scatter_gather},
                        {"grad_accumulation_fusion", m.grad_accumulation_fusion}};
  if (m.tp_comm_overlap) out["tp_comm_overlap"] = true;
  if (m.cp > 1) {
    out["cp"] = m.cp;
    out["cp_comm"] = schedule::to_string(m.cp_comm);
  }
  if (m.ep > 1) out["ep"] = m.ep;
  if (m.etp != 0) out["etp"] = m.etp;
  return out;
}

schedule::Plan plan_megatron(const Scenario& s) {
  auto plan = schedule::build_megatron_plan(s.model, config_of(s), s.training, s.overlap);
  plan.scheme = kName;
  return plan;
}

schedule::MemoryEstimate memory_megatron(const Scenario& s) {
  return schedule::estimate_megatron_memory(s.model, config_of(s), s.training);
}

// grad_accumulation_fusion is left out: it changes kernels, not the layout, and the report never showed it;
// tp_comm_overlap is shown only when on, cp and cp_comm only with cp > 1 (how every Megatron run before them
// was described); ep and etp only for a mixture of experts.
std::vector<LayoutField> describe_megatron(const Scenario& s) {
  const auto& m = config_of(s);
  std::vector<LayoutField> out = {{"tp", std::int64_t{m.tp}}};
  if (m.cp > 1) out.push_back({"cp", std::int64_t{m.cp}});
  out.insert(out.end(), {{"pp", std::int64_t{m.pp}},
                         {"dp", std::int64_t{m.dp}},
                         {"zero", std::int64_t{m.zero}},
                         {"micro_batch", std::int64_t{m.micro_batch}},
                         {"virtual_stages", std::int64_t{m.virtual_stages}},
                         {"sequence_parallel", m.sequence_parallel},
                         {"scatter_gather", m.scatter_gather}});
  if (m.tp_comm_overlap) out.push_back({"tp_comm_overlap", true});
  if (m.cp > 1) out.push_back({"cp_comm", std::string(schedule::to_string(m.cp_comm))});
  if (s.model.moe.enabled()) {
    out.push_back({"ep", std::int64_t{m.ep}});
    out.push_back({"etp", std::int64_t{m.expert_tp()}});
  }
  return out;
}

std::uint32_t layer_unit_megatron(const Scenario& s) { return config_of(s).pp * config_of(s).virtual_stages; }

double rank_layer_passes_megatron(const Scenario& s) {
  const auto& m = config_of(s);
  double per_rank = static_cast<double>(s.model.layers);
  return per_rank / m.pp * static_cast<double>(schedule::megatron_micro_batches(m, s.training));
}

// The largest context-parallel degree tune tries: the largest of a published run (Llama 3 405B at 131,072
// tokens, The Llama 3 Herd of Models, Table 4). Each CP degree adds a copy of the tp x pp x dp search.
constexpr std::uint32_t kMaxTunedCp = 16;

/// CP degrees tune tries on `base` with `ranks` GPUs per TP group: 1, and with flash attention the powers
/// of two up to kMaxTunedCp whose 2 cp chunks divide the sequence and that divide `ranks`.
std::vector<std::uint32_t> tuned_cp_degrees(const Scenario& base, std::uint32_t ranks) {
  std::vector<std::uint32_t> out = {1};
  if (base.training.attention != schedule::AttentionImpl::Flash) return out;
  for (std::uint32_t cp = 2; cp <= kMaxTunedCp; cp *= 2)
    if (base.model.seq_len % (2 * std::int64_t{cp}) == 0 && ranks % cp == 0) out.push_back(cp);
  return out;
}

// tp, cp, pp, dp = gpus / (tp cp pp), ep (a mixture of experts': every divisor of dp x cp that divides the
// experts; etp as the base scenario has it), zero 0-3 (0 alone when dp x cp = 1), micro_batch,
// virtual_stages, sequence_parallel when tp > 1, recompute none / selective / full, in that nesting order.
void enumerate_megatron(const Scenario& base, const std::function<void(const TuneChoice&)>& visit) {
  const Config* own = config_if<Config>(base.parallel.get());
  Config m = own ? *own : Config{};  // scatter_gather, grad_accumulation_fusion, tp_comm_overlap, cp_comm, etp
  const auto batches = divisors(static_cast<std::uint64_t>(base.training.global_batch));
  const auto chunks = divisors(static_cast<std::uint64_t>(base.model.layers));
  const auto experts = static_cast<std::uint64_t>(base.model.moe.experts);
  for (auto tp : divisors(base.gpus)) {
    for (auto cp : tuned_cp_degrees(base, base.gpus / tp)) {
      for (auto pp : divisors(base.gpus / tp / cp)) {
        for (auto ep : divisors(base.gpus / tp / pp)) {
          if (ep > 1 && (experts == 0 || experts % ep != 0)) continue;
          // ZeRO over one rank of dp x cp shards nothing: only stage 0 is a distinct layout there.
          const std::uint32_t last_zero = base.gpus / tp / pp > 1 ? 3 : 0;
          for (std::uint32_t zero = 0; zero <= last_zero; ++zero) {
            for (auto mb : batches) {
              for (auto v : chunks) {
                for (const bool sp : {false, true}) {
                  if (sp && tp == 1) continue;  // nothing to shard: the same configuration as without
                  m.tp = tp;
                  m.cp = cp;
                  m.pp = pp;
                  m.dp = base.gpus / tp / cp / pp;
                  m.zero = zero;
                  m.micro_batch = mb;
                  m.virtual_stages = v;
                  m.sequence_parallel = sp;
                  m.ep = ep;
                  const auto config = make_config(m);
                  for (const auto rc :
                       {schedule::Recompute::None, schedule::Recompute::Selective, schedule::Recompute::Full})
                    visit({config, rc});
                }
              }
            }
          }
        }
      }
    }
  }
}

auto key_of(const SchemeConfig& config) {
  const auto& m = config_as<Config>(config);
  return std::make_tuple(m.tp, m.pp, m.dp, m.zero, m.micro_batch, m.virtual_stages, m.sequence_parallel, m.cp, m.ep,
                         m.expert_tp());
}

bool less_megatron(const SchemeConfig& a, const SchemeConfig& b) { return key_of(a) < key_of(b); }

/// " ep=8" (and " etp=1" where it is not tp): a mixture of experts' layout; nothing for a dense one.
std::string experts_label(const Config& m) {
  std::string out;
  if (m.ep > 1) out += " ep=" + std::to_string(m.ep);
  if (m.etp != 0) out += " etp=" + std::to_string(m.etp);
  return out;
}

std::string label_megatron(const SchemeConfig& config, schedule::Recompute recompute) {
  const auto& m = config_as<Config>(config);
  // cp only with cp > 1: labels of configurations without context parallelism read as they always have.
  return "tp=" + std::to_string(m.tp) + (m.cp > 1 ? " cp=" + std::to_string(m.cp) : std::string()) +
         " pp=" + std::to_string(m.pp) + " dp=" + std::to_string(m.dp) + " zero=" + std::to_string(m.zero) +
         " mb=" + std::to_string(m.micro_batch) + " v=" + std::to_string(m.virtual_stages) +
         " sp=" + (m.sequence_parallel ? "on" : "off") + experts_label(m) +
         " recompute=" + schedule::to_string(recompute);
}

std::vector<std::string> csv_megatron(const SchemeConfig& config) {
  const auto& m = config_as<Config>(config);
  return {std::to_string(m.tp),
          std::to_string(m.cp),
          std::to_string(m.pp),
          std::to_string(m.dp),
          std::to_string(m.zero),
          std::to_string(m.micro_batch),
          std::to_string(m.virtual_stages),
          m.sequence_parallel ? "true" : "false",
          std::to_string(m.ep),
          std::to_string(m.expert_tp())};
}

// tune.csv keeps what tune searches; the switches it does not search read back as their defaults.
ConfigPtr from_csv_megatron(const CsvCells& cells) {
  const auto degree = [&](std::string_view column) { return csv_integer(cells, column, 1, kMaxGpus); };
  Config m;
  m.tp = degree("tp");
  m.cp = degree("cp");
  m.pp = degree("pp");
  m.dp = degree("dp");
  m.zero = csv_integer(cells, "zero", 0, 3);
  m.micro_batch = degree("micro_batch");
  m.virtual_stages = degree("virtual_stages");
  m.sequence_parallel = csv_bool(cells, "sequence_parallel");
  m.ep = degree("ep");
  m.etp = degree("etp");
  if (m.etp == m.tp) m.etp = 0;
  return make_config(m);
}

}  // namespace

Scheme megatron_scheme() {
  return {.name = kName,
          .title = "Megatron",
          .candidate_noun = "configuration",
          .searched =
              "tp x cp x pp x dp, expert parallelism, ZeRO, micro-batch, virtual stages, sequence "
              "parallelism, recompute",
          .load = load_megatron,
          .refusal = refusal_megatron,
          .to_json = json_megatron,
          .build_plan = plan_megatron,
          .memory_per_gpu = memory_megatron,
          .flops = transformer_flops,
          .describe = describe_megatron,
          .layer_unit = layer_unit_megatron,
          .rank_layer_passes = rank_layer_passes_megatron,
          .enumerate = enumerate_megatron,
          .searches_recompute = true,
          .less = less_megatron,
          .label = label_megatron,
          .csv_columns = {"tp", "cp", "pp", "dp", "zero", "micro_batch", "virtual_stages", "sequence_parallel", "ep",
                          "etp"},
          .to_csv = csv_megatron,
          .from_csv = from_csv_megatron,
          .make_estimate = make_megatron_estimate,
          .uniform_plan = nullptr};
}

}  // namespace exasim::scenario
