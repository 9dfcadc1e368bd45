#include "sim/scenario/placement.hpp"

#include "sim/core/data_dir.hpp"
#include "sim/core/error.hpp"
#include "sim/core/hash.hpp"
#include "sim/core/json_view.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace exasim::scenario {

namespace {

/// Ranks of the k-th job node go to the GPUs of nodes[k], in local order.
std::vector<std::uint32_t> fill_nodes(const std::vector<std::uint32_t>& nodes, std::uint32_t gpus_per_node,
                                      std::uint32_t ranks) {
  std::vector<std::uint32_t> gpu(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) gpu[r] = nodes[r / gpus_per_node] * gpus_per_node + r % gpus_per_node;
  return gpu;
}

std::vector<std::uint32_t> spread_nodes(const topo::Topology& t, std::uint32_t needed) {
  std::vector<std::vector<std::uint32_t>> by_group(t.group_count());
  for (std::uint32_t n = 0; n < t.node_count(); ++n) by_group[t.group_of_node(n)].push_back(n);
  std::vector<std::uint32_t> nodes;
  for (std::uint32_t depth = 0; nodes.size() < needed; ++depth) {
    for (const auto& group : by_group) {
      if (depth < group.size() && nodes.size() < needed) nodes.push_back(group[depth]);
    }
  }
  return nodes;
}

std::vector<std::uint32_t> random_nodes(const topo::Topology& t, std::uint32_t needed, std::uint64_t seed) {
  std::vector<std::uint32_t> nodes(t.node_count());
  for (std::uint32_t n = 0; n < nodes.size(); ++n) nodes[n] = n;
  return draw_nodes(std::move(nodes), needed, seed);
}

std::vector<std::uint32_t> read_placement_file(const PlacementSpec& spec, const topo::Topology& t,
                                               std::uint32_t ranks) {
  std::error_code missing;
  if (!std::filesystem::exists(spec.file, missing))
    throw InputError(spec.file, "placement.file", "cannot open the placement file");
  std::istringstream in(read_input_text(spec.file, "a placement file"));  // bounded: /dev/zero has no end
  std::vector<std::uint32_t> gpu;
  std::vector<bool> used(t.gpu_count(), false);
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const auto field = "line " + std::to_string(number);
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string text = line.substr(first, last - first + 1);
    std::uint64_t id = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || end != text.data() + text.size())
      throw InputError(spec.file, field, "expected one GPU id (a non-negative integer), got '" + text + "'");
    if (id >= t.gpu_count())
      throw InputError(spec.file, field,
                       "GPU " + text + " does not exist: the machine has GPUs 0-" + std::to_string(t.gpu_count() - 1));
    if (used[id]) throw InputError(spec.file, field, "GPU " + text + " is given to two ranks");
    used[id] = true;
    gpu.push_back(static_cast<std::uint32_t>(id));
  }
  if (gpu.size() != ranks)
    throw InputError(
        spec.file, "placement.file",
        "lists " + std::to_string(gpu.size()) + " GPUs, the scenario has " + std::to_string(ranks) + " ranks");
  return gpu;
}

}  // namespace

std::vector<std::uint32_t> draw_nodes(std::vector<std::uint32_t> nodes, std::uint32_t needed, std::uint64_t seed) {
  // Partial Fisher-Yates with our own generator (sim/core/hash.hpp): the same seed must give the same
  // placement everywhere.
  SplitMix64 random(seed);
  for (std::uint32_t i = 0; i < needed; ++i) {
    const std::uint64_t left = nodes.size() - i;
    std::swap(nodes[i], nodes[i + random.next() % left]);
  }
  nodes.resize(needed);
  return nodes;
}

std::string to_string(PlacementPolicy p) {
  switch (p) {
    case PlacementPolicy::Packed: return "packed";
    case PlacementPolicy::Spread: return "spread";
    case PlacementPolicy::Random: return "random";
    case PlacementPolicy::File: return "file";
  }
  return "?";
}

PlacementSpec load_placement(const JsonView& parent, std::uint64_t default_seed) {
  PlacementSpec spec;
  spec.seed = default_seed;
  spec.source = parent.source();
  if (!parent.has("placement")) return spec;
  const auto choices = {std::string_view("packed"), std::string_view("spread"), std::string_view("random"),
                        std::string_view("file")};
  std::string policy;
  if (parent.json().at("placement").is_string()) {
    policy = parent.choice("placement", choices);
    if (policy == "file")
      parent.fail("placement", "the file policy needs an object: {\"policy\": \"file\", \"file\": PATH}");
  } else {
    auto v = parent.object("placement");
    v.check_keys({"policy", "seed", "file"});
    policy = v.choice("policy", choices);
    spec.seed = v.unsigned_integer_or("seed", default_seed);
    if (policy == "file") {
      // Beside the scenario first, then the current directory.
      const auto candidates = input_file_candidates(v.string("file"), parent.source());
      const auto p = first_file(candidates);
      if (p.empty())
        v.fail("file", "no such file '" + v.string("file") + "' (tried " + list_candidates(candidates) + ")");
      spec.file = p.string();
    } else if (v.has("file")) {
      v.fail("file", "only the file policy reads a file");
    }
  }
  spec.policy = policy == "spread"   ? PlacementPolicy::Spread
                : policy == "random" ? PlacementPolicy::Random
                : policy == "file"   ? PlacementPolicy::File
                                     : PlacementPolicy::Packed;
  return spec;
}

std::vector<std::uint32_t> place_ranks(const PlacementSpec& spec, const topo::Topology& t, std::uint32_t ranks) {
  if (ranks > t.gpu_count())
    throw InputError(
        spec.source, "gpus",
        std::to_string(ranks) + " ranks do not fit on the machine's " + std::to_string(t.gpu_count()) + " GPUs");
  const std::uint32_t per_node = t.gpus_per_node();
  const std::uint32_t needed = (ranks + per_node - 1) / per_node;
  switch (spec.policy) {
    case PlacementPolicy::Packed: return {};
    case PlacementPolicy::Spread: return fill_nodes(spread_nodes(t, needed), per_node, ranks);
    case PlacementPolicy::Random: return fill_nodes(random_nodes(t, needed, spec.seed), per_node, ranks);
    case PlacementPolicy::File: return read_placement_file(spec, t, ranks);
  }
  return {};
}

}  // namespace exasim::scenario
