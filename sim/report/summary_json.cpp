#include "sim/report/summary_views.hpp"

#include <variant>

namespace exasim::report {

nlohmann::ordered_json parallel_json(const Summary& s) {
  nlohmann::ordered_json parallel = {{"scheme", s.scheme}};
  for (const auto& field : s.layout) std::visit([&](auto value) { parallel[field.name] = value; }, field.value);
  return parallel;
}

nlohmann::ordered_json to_json(const Summary& s) {
  using json = nlohmann::ordered_json;
  json exposed = json::object(), bytes = json::object(), count = json::object();
  for (const auto& d : s.dimensions) {
    exposed[d.name] = d.exposed_comm_s;
    bytes[d.name] = d.rank0_wire_bytes;
    count[d.name] = d.rank0_collectives;
  }
  const auto& m = s.memory;
  const auto& basis = s.memory_basis;
  const schedule::MemoryVerdict verdict = schedule::memory_verdict(m, s.memory_capacity_bytes);
  json out = {
      {"scenario", s.scenario},
      {"backend", s.backend},
      {"machine", s.machine},
      {"gpu", s.gpu},
      {"model", s.model},
      {"parameters", s.parameters},
      {"gpus", s.gpus},
      {"network", s.network},
      {"routing", s.routing},
      {"placement", s.placement},
      {"collectives", s.collectives},
      {"parallel", parallel_json(s)},
      {"global_batch", s.global_batch},
      {"training",
       {{"recompute", s.recompute}, {"attention", s.attention}, {"dropout", s.dropout}, {"dtype", s.dtype}}},
      {"iteration_time_s", s.iteration_time_s},
      {"model_flops", s.model_flops},
      {"hardware_flops", s.hardware_flops},
      {"tflops_per_gpu", s.tflops_per_gpu},
      {"model_tflops_per_gpu", s.model_tflops_per_gpu},
      {"peak_tflops_per_gpu", s.peak_tflops_per_gpu},
      {"percent_of_peak", s.percent_of_peak},
      {"mfu_percent", s.mfu_percent},
      {"total_pflops", s.total_pflops},
      {"breakdown_s",
       {{"compute", s.compute_s},
        {"compute_slowed_beside_comm", s.compute_slowed_s},
        {"exposed_comm", exposed},
        {"idle", s.idle_s}}},
      {"memory_per_gpu_bytes", m.total()},
      {"memory_breakdown_bytes",
       {{"weights", m.weights},
        {"gradients", m.gradients},
        {"optimizer", m.optimizer},
        {"activations", m.activations},
        {"workspace", m.workspace}}},
      {"memory_basis",
       {{"dtype", basis.dtype},
        {"gradient_bytes", basis.gradient_bytes},
        {"recompute", basis.recompute},
        {"attention", basis.attention},
        {"dropout", basis.dropout}}},
      {"memory_workspace_bytes", {{"logits", m.logits}, {"buffers", m.buffers}, {"runtime", m.runtime}}},
      {"memory_largest_term", verdict.largest},
      {"memory_over_capacity_bytes", verdict.over_bytes},
      {"memory_over_terms", verdict.over_terms},
      {"memory_capacity_bytes", s.memory_capacity_bytes},
      {"comm_bytes_per_rank", bytes},
      {"collectives_per_rank", count},
      {"events", s.events},
      {"flows", s.flows},
      {"seed", s.seed},
  };
  if (s.sampled_layers) out["sampled_layers"] = {s.sampled_layers->fewer, s.sampled_layers->more};
  if (s.compute_by_kernel) {
    json classes = json::object();
    for (const auto& c : *s.compute_by_kernel) classes[c.kernel_class] = c.seconds;
    out["compute_by_kernel_s"] = classes;
  }
  if (s.experts) {
    const auto& x = *s.experts;
    out["experts"] = {{"experts", x.experts},
                      {"top_k", x.top_k},
                      {"ep", x.ep},
                      {"active_parameters", x.active_parameters},
                      {"busiest_over_mean", x.busiest_over_mean},
                      {"dropped", x.dropped}};
  }
  if (s.links) {
    json classes = json::array(), hottest = json::array();
    for (const auto& c : s.links->classes)
      classes.push_back({{"class", c.link_class},
                         {"links", c.links},
                         {"used", c.used},
                         {"bytes", c.bytes},
                         {"mean_busy_s", c.mean_busy_s},
                         {"mean_utilisation", c.mean_utilisation},
                         {"max_utilisation", c.max_utilisation}});
    for (const auto& h : s.links->hottest)
      hottest.push_back({{"link", h.link},
                         {"class", h.link_class},
                         {"from", h.from},
                         {"to", h.to},
                         {"bytes", h.bytes},
                         {"busy_s", h.busy_s},
                         {"utilisation", h.utilisation}});
    out["links"] = {{"classes", classes}, {"hottest", hottest}};
    if (s.links->groups > 1) out["links"]["group_bytes"] = s.links->group_bytes;
    for (const auto& d : s.links->all_to_all_group_bytes) out["links"]["all_to_all_group_bytes"][d.dim] = d.bytes;
  }
  if (!s.files_written.empty()) out["files_written"] = s.files_written;
  return out;
}

}  // namespace exasim::report
