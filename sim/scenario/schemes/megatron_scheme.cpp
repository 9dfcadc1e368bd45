#include "sim/scenario/schemes/megatron_scheme.hpp"

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedule/megatron.hpp"

namespace exasim::scenario {

namespace {

// Rank layout as Megatron-LM's: TP fastest, then DP, then PP (megatron.hpp).
void load_megatron(const JsonView& parallel, Scenario& s) {
  parallel.check_keys({"scheme", "tp", "pp", "dp", "zero", "micro_batch", "virtual_stages", "sequence_parallel",
                       "scatter_gather", "grad_accumulation_fusion", "tp_comm_overlap"});
  auto& m = s.megatron;
  m.tp = parallel_degree(parallel, "tp");
  m.pp = parallel_degree(parallel, "pp");
  m.dp = parallel_degree(parallel, "dp");
  m.zero = static_cast<std::uint32_t>(parallel.integer_or("zero", 0, 0, 3));
  m.micro_batch = parallel_degree(parallel, "micro_batch");
  m.virtual_stages = parallel_degree(parallel, "virtual_stages");
  m.sequence_parallel = parallel.boolean_or("sequence_parallel", false);
  m.scatter_gather = parallel.boolean_or("scatter_gather", true);
  m.grad_accumulation_fusion = parallel.boolean_or("grad_accumulation_fusion", true);
  m.tp_comm_overlap = parallel.boolean_or("tp_comm_overlap", false);
  if (auto bad = megatron_refusal(s); !bad.why.empty()) throw InputError(s.source, bad.field, bad.why);
}

schedule::Plan plan_megatron(const Scenario& s) {
  return schedule::build_megatron_plan(s.model, s.megatron, s.training, s.overlap);
}

schedule::MemoryEstimate memory_megatron(const Scenario& s) {
  return schedule::estimate_megatron_memory(s.model, s.megatron, s.training);
}

// grad_accumulation_fusion is left out: it changes kernels, not the layout, and the report never showed it;
// tp_comm_overlap is shown only when on (off is how every Megatron run before it was described).
std::vector<LayoutField> describe_megatron(const Scenario& s) {
  const auto& m = s.megatron;
  std::vector<LayoutField> out = {{"tp", std::int64_t{m.tp}},
                                  {"pp", std::int64_t{m.pp}},
                                  {"dp", std::int64_t{m.dp}},
                                  {"zero", std::int64_t{m.zero}},
                                  {"micro_batch", std::int64_t{m.micro_batch}},
                                  {"virtual_stages", std::int64_t{m.virtual_stages}},
                                  {"sequence_parallel", m.sequence_parallel},
                                  {"scatter_gather", m.scatter_gather}};
  if (m.tp_comm_overlap) out.push_back({"tp_comm_overlap", true});
  return out;
}

std::uint32_t layer_unit_megatron(const Scenario& s) { return s.megatron.pp * s.megatron.virtual_stages; }

}  // namespace

schedule::Infeasibility megatron_refusal(const Scenario& s) {
  const auto& m = s.megatron;
  if (auto bad = schedule::megatron_infeasibility(s.model, m, s.training, s.gpus); !bad.why.empty()) return bad;
  // Each micro-batch runs every layer of a stage: the plan holds micro-batches x layers passes per
  // rank. 40,000 micro-batches of a 48-layer model (1.9M) took 35 s and 4.4 GB on 2 cores.
  const auto micro_batches = schedule::megatron_micro_batches(m, s.training);
  const auto passes = micro_batches * s.model.layers;
  if (passes > kMaxLayerPasses)
    return {"training.global_batch",
            std::to_string(micro_batches) + " micro-batches x " + std::to_string(s.model.layers) +
                " layers = " + std::to_string(passes) + " layer passes per iteration, more than the " +
                std::to_string(kMaxLayerPasses) +
                " exasim simulates in bounded time and memory: raise parallel.micro_batch or dp, or lower "
                "global_batch"};
  return {};
}

Scheme megatron_scheme() {
  return {.id = SchemeId::Megatron,
          .name = "megatron",
          .load = load_megatron,
          .build_plan = plan_megatron,
          .memory_per_gpu = memory_megatron,
          .flops = transformer_flops,
          .describe = describe_megatron,
          .layer_unit = layer_unit_megatron};
}

}  // namespace exasim::scenario
