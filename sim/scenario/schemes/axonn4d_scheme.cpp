#include "sim/scenario/schemes/axonn4d_scheme.hpp"

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedule/axonn4d.hpp"

namespace exasim::scenario {

namespace {

// Rank layout x fastest, then y, z, data (docs/axonn.md section 1).
void load_axonn4d(const JsonView& parallel, Scenario& s) {
  parallel.check_keys({"scheme", "gx", "gy", "gz", "gdata"});
  s.axonn = {parallel_degree(parallel, "gx"), parallel_degree(parallel, "gy"), parallel_degree(parallel, "gz"),
             parallel_degree(parallel, "gdata")};
  const auto& a = s.axonn;
  const std::uint64_t product = std::uint64_t{a.gx} * a.gy * a.gz * a.gdata;
  if (product != s.gpus) {
    parallel.fail("gdata", "gx*gy*gz*gdata = " + std::to_string(a.gx) + "*" + std::to_string(a.gy) + "*" +
                               std::to_string(a.gz) + "*" + std::to_string(a.gdata) + " = " + std::to_string(product) +
                               " must equal gpus = " + std::to_string(s.gpus));
  }
  if (auto bad = schedule::axonn4d_infeasibility(s.model, s.axonn, s.training.global_batch); !bad.why.empty())
    throw InputError(s.source, bad.field, bad.why);
}

schedule::Plan plan_axonn4d(const Scenario& s) {
  return schedule::build_axonn4d_plan(s.model, s.axonn, s.training, s.overlap);
}

schedule::MemoryEstimate memory_axonn4d(const Scenario& s) {
  return schedule::estimate_axonn4d_memory(s.model, s.axonn, s.training);
}

// The grid's dimensions as the plan names them (x, y, z, data), prefixed with g as in the scenario.
std::vector<LayoutField> describe_axonn4d(const Scenario& s) {
  const auto& a = s.axonn;
  return {{"gx", std::int64_t{a.gx}},
          {"gy", std::int64_t{a.gy}},
          {"gz", std::int64_t{a.gz}},
          {"gdata", std::int64_t{a.gdata}}};
}

}  // namespace

Scheme axonn4d_scheme() {
  return {.id = SchemeId::Axonn4D,
          .name = "axonn4d",
          .load = load_axonn4d,
          .build_plan = plan_axonn4d,
          .memory_per_gpu = memory_axonn4d,
          .flops = transformer_flops,
          .describe = describe_axonn4d,
          .layer_unit = [](const Scenario&) { return std::uint32_t{1}; }};
}

}  // namespace exasim::scenario
