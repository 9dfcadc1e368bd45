// Reading an allocation (`exasim place --nodes FILE`): the node list a batch scheduler hands a job.
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/place/place.hpp"

#include <charconv>
#include <filesystem>
#include <sstream>

namespace exasim::place {

namespace {

constexpr const char* kFormat = "node ids (integers) separated by newlines or commas, or ranges such as 12-40";

std::uint64_t parse_id(const std::string& path, const std::string& field, const std::string& text) {
  std::uint64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw InputError(path, field, "'" + text + "' is not a node id: expected " + kFormat);
  return id;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r"), last = s.find_last_not_of(" \t\r");
  return first == std::string::npos ? std::string{} : s.substr(first, last - first + 1);
}

}  // namespace

Allocation whole_machine(const topo::Topology& topology) {
  Allocation a;
  a.source = "the whole machine";
  a.nodes.resize(topology.node_count());
  for (std::uint32_t n = 0; n < a.nodes.size(); ++n) a.nodes[n] = n;
  return a;
}

Allocation read_allocation(const std::string& path, const topo::Topology& topology, std::uint32_t needed) {
  std::error_code missing;
  if (!std::filesystem::is_regular_file(path, missing))
    throw InputError(path, "--nodes", "cannot open the node list (expected a file of " + std::string(kFormat) + ")");
  std::istringstream in(read_input_text(path, "a node list"));  // bounded, as every input
  Allocation a;
  a.from_file = true;
  a.source = path;
  const std::uint32_t nodes = topology.node_count();
  std::vector<bool> used(nodes, false);
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const auto field = "line " + std::to_string(number);
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream items(line);
    std::string item;
    while (std::getline(items, item, ',')) {
      item = trim(item);
      if (item.empty()) continue;
      const auto dash = item.find('-');
      const std::uint64_t first = parse_id(path, field, trim(item.substr(0, dash)));
      const std::uint64_t last = dash == std::string::npos ? first : parse_id(path, field, trim(item.substr(dash + 1)));
      if (last < first) throw InputError(path, field, "range '" + item + "' ends before it starts");
      if (last >= nodes)
        throw InputError(
            path, field,
            "node " + std::to_string(last) + " does not exist: the machine has nodes 0-" + std::to_string(nodes - 1));
      for (std::uint64_t n = first; n <= last; ++n) {
        if (used[n]) throw InputError(path, field, "node " + std::to_string(n) + " is listed twice");
        used[n] = true;
        a.nodes.push_back(static_cast<std::uint32_t>(n));
      }
    }
  }
  if (a.nodes.size() < needed)
    throw InputError(path, "--nodes",
                     "lists " + std::to_string(a.nodes.size()) + " nodes, the job needs " + std::to_string(needed) +
                         " (its GPUs over " + std::to_string(topology.gpus_per_node()) + " GPUs per node)");
  return a;
}

}  // namespace exasim::place
