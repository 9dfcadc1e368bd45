#include "validate/collective_runs.hpp"

#include "sim/collectives/router.hpp"
#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/flow/fast_runtime.hpp"
#include "sim/schedule/stream_builder.hpp"

#include <memory>

namespace exasim::validate {

using schedule::CollKind;

double bus_factor(CollKind kind, std::uint32_t n) {
  if (n < 2) return 0;
  const double share = static_cast<double>(n - 1) / n;
  return kind == CollKind::AllReduce ? 2 * share : share;
}

CollectiveRun simulate_collective(const scenario::MachineSpec& machine, std::uint32_t gpus, CollKind kind, double bytes,
                                  collectives::Algorithm algorithm, bool rings_only) {
  const auto topology = scenario::build_topology(machine, gpus);
  schedule::Plan plan;
  plan.scheme = "collective";
  plan.grid = schedule::ProcessGrid({{"x", gpus}});
  plan.streams.resize(1);
  {
    schedule::StreamBuilder b(plan, plan.streams[0]);
    b.collective("collective", kind, 0, bytes);
  }
  runtime::Job job;
  job.plan = &plan;
  job.collective_step_overhead_s = machine.collective_step_overhead_s;
  job.collective_algorithm = algorithm;
  job.nccl_profile = machine.nccl_profile;
  if (rings_only) job.nccl_profile.tree = job.nccl_profile.nvls = false;
  flow::FastRuntime fast(*topology, {});
  const runtime::RunResult result = fast.run(job, {}, {});
  CollectiveRun run;
  run.time_s = result.iteration_s;
  run.bus_Bps = run.time_s > 0 ? bytes / run.time_s * bus_factor(kind, gpus) : 0;
  if (algorithm == collectives::Algorithm::Nccl && gpus > 1) {
    const auto call = runtime::group_call(job, 0, 0, 0, 0, kind, bytes);
    run.choice = collectives::nccl_choose(job.nccl_profile, collectives::nccl_inputs(*topology, call));
  }
  return run;
}

std::vector<PublishedCollective> load_published_collectives(const std::string& path) {
  const nlohmann::json doc = read_json_file(path);
  JsonView root(doc, path, "");
  root.check_keys({"description", "definitions", "points"});
  if (!doc.contains("points") || !doc["points"].is_array()) root.fail("points", "missing, or not a list of points");
  std::vector<PublishedCollective> out;
  for (std::size_t i = 0; i < doc["points"].size(); ++i) {
    JsonView v(doc["points"][i], path, "points[" + std::to_string(i) + "]");
    v.check_keys({"name", "machine", "machine_patch", "gpus", "collective", "algorithm", "bytes", "bus_GBps", "time_us",
                  "source", "note", "scored"});
    PublishedCollective p;
    p.name = v.string("name");
    p.machine = v.string("machine");
    if (v.has("machine_patch")) p.machine_patch = v.object("machine_patch").json();
    p.gpus = static_cast<std::uint32_t>(v.integer("gpus", 2, 1 << 20));
    const std::string kind = v.choice("collective", {"all_reduce", "all_gather", "reduce_scatter"});
    p.kind = *schedule::coll_kind_of(kind);
    p.algorithm = v.choice("algorithm", {"nccl", "ring"}, "nccl");
    auto numbers = [&](const char* key) {
      std::vector<double> xs;
      if (!v.has(key)) return xs;
      const auto& arr = v.json()[key];
      if (!arr.is_array()) v.fail(key, "must be a list of positive numbers");
      for (const auto& x : arr) {
        if (!x.is_number() || !(x.get<double>() > 0)) v.fail(key, "must be a list of positive numbers");
        xs.push_back(x.get<double>());
      }
      return xs;
    };
    p.bytes = numbers("bytes");
    p.bus_GBps = numbers("bus_GBps");
    p.time_us = numbers("time_us");
    if (p.bytes.empty()) v.fail("bytes", "at least one message size");
    if (p.bus_GBps.empty() == p.time_us.empty()) v.fail("bus_GBps", "give bus_GBps or time_us, one per size");
    if (std::max(p.bus_GBps.size(), p.time_us.size()) != p.bytes.size())
      v.fail(p.bus_GBps.empty() ? "time_us" : "bus_GBps", "one figure per entry of bytes");
    p.source = v.string("source");
    p.note = v.string_or("note", "");
    p.scored = v.boolean_or("scored", true);
    out.push_back(std::move(p));
  }
  return out;
}

scenario::MachineSpec machine_of(const PublishedCollective& point) {
  const auto path = find_preset("topologies/presets", point.machine);
  if (path.empty())
    throw InputError("published_busbw.json", point.name + ".machine", "unknown preset " + point.machine);
  nlohmann::json doc = read_json_file(path.string());
  if (!point.machine_patch.is_null()) doc.merge_patch(point.machine_patch);
  return scenario::load_machine_spec(JsonView(doc, path.string(), "machine"));
}

}  // namespace exasim::validate
