#include "sim/scenario/scenario.hpp"

#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"

#include <cstdio>
#include <filesystem>
#include <map>

namespace exasim::scenario {

namespace {

constexpr const char* kMachineFolder = "topologies/presets";
constexpr const char* kModelFolder = "configs/models";

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

/// Replaces a preset reference under `key` by the object it names; remembers which file it came from.
void inline_preset(nlohmann::json& doc, const std::string& key, const char* folder, const std::string& source,
                   std::map<std::string, std::string>& origin) {
  if (!doc.contains(key) || !doc[key].is_string()) return;
  std::string name = doc[key].get<std::string>();
  // A relative path is looked for beside the scenario first, then in the current directory.
  std::vector<std::filesystem::path> tried;
  auto path = find_preset(folder, name, source, &tried);
  if (path.empty()) {
    throw InputError(source, key,
                     "unknown preset '" + name + "' (presets: " + join(preset_names(folder)) +
                         ") and no such file (tried " + list_candidates(tried) +
                         "); give a preset name, a path to a JSON file, or an inline object");
  }
  doc[key] = read_json_file(path.string());
  origin[key] = path.string();
}

void apply_override(nlohmann::json& doc, const std::string& text, const std::string& source,
                    std::map<std::string, std::string>& origin) {
  const auto assignment = parse_assignment(text);
  if (assignment.parts.size() > 1) {  // a field inside a preset: inline the preset first
    inline_preset(doc, "machine", kMachineFolder, source, origin);
    inline_preset(doc, "model", kModelFolder, source, origin);
  }
  assign_field(doc, assignment, "the scenario");
  // A whole preset replaced: it no longer comes from a file.
  if (assignment.parts.size() == 1) origin.erase(assignment.parts[0]);
}

}  // namespace

Scenario parse_scenario(nlohmann::json doc, const std::string& source, const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> origin;  // key -> preset file it was inlined from
  for (const auto& o : overrides) apply_override(doc, o, source, origin);
  JsonView root(doc, source, "");
  root.check_keys({"name", "description", "machine", "model", "gpus", "parallel", "training", "overlap", "placement",
                   "collectives", "seed", "simulation", "job"});
  for (const char* key : {"machine", "model", "gpus", "parallel", "training"})
    if (!root.has(key)) root.fail(key, "missing required field");
  inline_preset(doc, "machine", kMachineFolder, source, origin);
  inline_preset(doc, "model", kModelFolder, source, origin);

  Scenario s;
  s.source = source;
  s.name = root.string_or("name", "scenario");
  (void)root.string_or("description", "");  // free text, but text
  auto view_of = [&](const std::string& key) {
    auto it = origin.find(key);
    if (it == origin.end()) return root.object(key);
    return JsonView(doc[key], it->second, key);
  };
  s.machine = load_machine_spec(view_of("machine"));
  s.model = schedule::load_model_spec(view_of("model"));
  // 2^20 GPUs, 2 layers, one switch: ~10 s and 1.3 GB on 2 cores (docs/reliability.md); 2^22 took 56 s
  // and 5.2 GB for the same model, and more layers multiply the time.
  s.gpus = static_cast<std::uint32_t>(root.integer("gpus", 1, kMaxGpus));
  s.seed = root.unsigned_integer_or("seed", 1);
  s.placement = load_placement(root, s.seed);

  auto training = root.object("training");
  training.check_keys({"global_batch", "recompute", "attention", "dropout", "dtype", "dp_grad_dtype"});
  s.training.global_batch = training.integer("global_batch", 1, std::int64_t{1} << 40);
  // choice() has checked the names, so the parses cannot fail.
  s.training.recompute =
      *schedule::parse_recompute(training.choice("recompute", {"full", "selective", "none"}, "full"));
  s.training.attention = *schedule::parse_attention(training.choice("attention", {"flash", "standard"}, "flash"));
  s.training.dropout = training.number_or("dropout", 0.1, 0, 0.95, /*min_exclusive=*/false);
  s.training.dtype = *gpu::parse_dtype(training.choice("dtype", {"bf16", "fp16", "fp32", "fp8"}, "bf16"));
  if (const auto& device = s.machine.gpu_choice.device; s.training.fp8() && !device.has_fp8())
    training.fail("dtype", "fp8 needs FP8 tensor cores, and the machine's gpu '" + device.name +
                               "' has none (devices with FP8: " + gpu::fp8_device_names() + ")");
  s.training.dp_grad_bytes = training.choice("dp_grad_dtype", {"fp32", "bf16", "fp16"}, "fp32") == "fp32" ? 4 : 2;

  if (root.has("overlap")) {
    auto overlap = root.object("overlap");
    overlap.check_keys({"oar", "ors", "oag", "dp", "interference"});
    s.overlap = {overlap.boolean_or("oar", true), overlap.boolean_or("ors", true), overlap.boolean_or("oag", true),
                 overlap.boolean_or("dp", false), overlap.boolean_or("interference", true)};
  }

  if (root.has("collectives")) {
    auto collectives = root.object("collectives");
    collectives.check_keys({"algorithm"});
    // The registered algorithms (sim/collectives/algorithm.hpp) are the choices.
    const std::string name = collectives.string_or("algorithm", "nccl");
    const auto algorithm = collectives::parse_algorithm(name);
    if (!algorithm) collectives.fail("algorithm", "'" + name + "' is not one of: " + collectives::algorithm_names());
    s.collective_algorithm = *algorithm;
  }

  if (root.has("simulation")) {
    auto simulation = root.object("simulation");
    simulation.check_keys({"sample_layers"});
    s.sample_layers = static_cast<std::uint32_t>(simulation.integer_or("sample_layers", 0, 0, kMaxSampleLayers));
  }

  auto parallel = root.object("parallel");
  const std::string scheme_name = parallel.string("scheme");
  const Scheme* entry = find_scheme(scheme_name);
  if (!entry) parallel.fail("scheme", "'" + scheme_name + "' is not one of: " + scheme_names());
  s.scheme = entry;
  entry->load(parallel, s);
  if (root.has("job")) {
    job::JobContext context;
    context.gpus = s.gpus;
    context.gpus_per_node = s.machine.node.gpus;
    context.tokens_per_step = static_cast<double>(s.training.global_batch) * static_cast<double>(s.model.seq_len);
    context.seed = s.seed;
    s.job = job::load_job_config(root.object("job"), context);
  }
  s.resolved = std::move(doc);
  return s;
}

double rank_layer_passes(const Scenario& s) { return scheme_of(s).rank_layer_passes(s) * s.gpus; }

schedule::MemoryEstimate memory_per_gpu(const Scenario& s) { return scheme_of(s).memory_per_gpu(s); }

void check_memory_fits(const Scenario& s) {
  const auto m = memory_per_gpu(s);
  const double capacity = s.machine.gpu_choice.device.hbm_capacity_bytes.value;
  if (m.total() <= capacity) return;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "needs %.1f GB per GPU (weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f, "
                "workspace %.1f) but the %s has %.1f GB: shard more (larger tensor/pipeline/ZeRO degree), "
                "recompute, or pass --ignore-memory to simulate anyway",
                m.total() / 1e9, m.weights / 1e9, m.gradients / 1e9, m.optimizer / 1e9, m.activations / 1e9,
                m.workspace / 1e9, s.machine.gpu_choice.device.name.c_str(), capacity / 1e9);
  throw InputError(s.source, "parallel", buf);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_scenario(read_json_file(path), path, overrides);
}

}  // namespace exasim::scenario
