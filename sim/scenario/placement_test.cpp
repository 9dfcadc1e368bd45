#include "sim/scenario/placement.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"
#include "sim/scenario/machine.hpp"
#include "sim/scenario/prepared_job.hpp"

#include "topologies/test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace exasim;
using namespace exasim::scenario;

namespace {

using topo::testing::kTinyDragonflyMachine;  // topologies/test_support.hpp

struct Fixture {
  nlohmann::json machine_doc = nlohmann::json::parse(kTinyDragonflyMachine);
  MachineSpec machine = load_machine_spec(JsonView(machine_doc, "tiny.json", ""));
  std::unique_ptr<topo::Topology> topology = build_topology(machine, 0);
};

PlacementSpec spec_of(const std::string& text) {
  static nlohmann::json doc;
  doc = nlohmann::json::parse(text);
  return load_placement(JsonView(doc, "s.json", ""), 5);
}

std::set<std::uint32_t> groups_used(const topo::Topology& t, const std::vector<std::uint32_t>& gpus) {
  std::set<std::uint32_t> groups;
  for (auto g : gpus) groups.insert(t.group_of_node(t.node_of(g)));
  return groups;
}

}  // namespace

TEST_CASE("packed placement is the identity and fills groups in order", "[unit]") {
  Fixture f;
  REQUIRE(f.topology->group_count() == 4);
  CHECK(place_ranks(spec_of("{}"), *f.topology, 16).empty());
  CHECK(spec_of("{}").policy == PlacementPolicy::Packed);
}

TEST_CASE("spread placement deals the job's nodes round-robin over the groups", "[unit]") {
  Fixture f;
  auto gpus = place_ranks(spec_of(R"({"placement": "spread"})"), *f.topology, 8);  // 4 nodes
  REQUIRE(gpus.size() == 8);
  CHECK(groups_used(*f.topology, gpus).size() == 4);
  // Ranks of a node stay together: ranks 0 and 1 share a node, ranks 1 and 2 do not.
  CHECK(f.topology->node_of(gpus[0]) == f.topology->node_of(gpus[1]));
  CHECK(f.topology->node_of(gpus[1]) != f.topology->node_of(gpus[2]));
  CHECK(gpus[1] == gpus[0] + 1);
}

TEST_CASE("random placement is a seeded choice of distinct nodes", "[unit]") {
  Fixture f;
  auto a = place_ranks(spec_of(R"({"placement": {"policy": "random", "seed": 3}})"), *f.topology, 20);
  auto b = place_ranks(spec_of(R"({"placement": {"policy": "random", "seed": 3}})"), *f.topology, 20);
  auto c = place_ranks(spec_of(R"({"placement": {"policy": "random", "seed": 4}})"), *f.topology, 20);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(std::set<std::uint32_t>(a.begin(), a.end()).size() == 20);
  // The scenario seed is the default.
  CHECK(spec_of(R"({"placement": {"policy": "random"}})").seed == 5);
}

TEST_CASE("placement files give each rank a GPU and are checked", "[unit]") {
  Fixture f;
  auto dir = std::filesystem::temp_directory_path();
  auto write = [&](const char* name, const char* text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  auto good = write("exasim_place_good.txt", "# rank -> gpu\n63\n0\n\n17 # a comment\n5\n");
  auto gpus = place_ranks(spec_of(R"({"placement": {"policy": "file", "file": ")" + good + R"("}})"), *f.topology, 4);
  CHECK(gpus == std::vector<std::uint32_t>{63, 0, 17, 5});

  auto dup = write("exasim_place_dup.txt", "1\n1\n");
  CHECK_THROWS_WITH(
      place_ranks(spec_of(R"({"placement": {"policy": "file", "file": ")" + dup + R"("}})"), *f.topology, 2),
      Catch::Contains("line 2") && Catch::Contains("two ranks"));
  auto big = write("exasim_place_big.txt", "1\n64\n");
  CHECK_THROWS_WITH(
      place_ranks(spec_of(R"({"placement": {"policy": "file", "file": ")" + big + R"("}})"), *f.topology, 2),
      Catch::Contains("GPUs 0-63"));
  CHECK_THROWS_WITH(
      place_ranks(spec_of(R"({"placement": {"policy": "file", "file": ")" + good + R"("}})"), *f.topology, 3),
      Catch::Contains("lists 4 GPUs") && Catch::Contains("3 ranks"));
  // A device with no end of line is no placement file: refused, never read until memory runs out (and a
  // regular file is read at most 64 MiB, read_input_text).
  CHECK_THROWS_WITH(spec_of(R"({"placement": {"policy": "file", "file": "/dev/zero"}})"),
                    Catch::Contains("placement.file") && Catch::Contains("/dev/zero"));
}

TEST_CASE("bad placement entries name the field", "[unit]") {
  CHECK_THROWS_WITH(spec_of(R"({"placement": "scattered"})"),
                    Catch::Contains("placement") && Catch::Contains("spread"));
  CHECK_THROWS_WITH(spec_of(R"({"placement": {"policy": "file"}})"), Catch::Contains("placement.file"));
  CHECK_THROWS_WITH(spec_of(R"({"placement": {"policy": "file", "file": "/no/such/file"}})"),
                    Catch::Contains("no such file"));
  CHECK_THROWS_WITH(spec_of(R"({"placement": {"policy": "spread", "sed": 1}})"), Catch::Contains("sed"));
  Fixture f;
  CHECK_THROWS_AS(place_ranks(spec_of(R"({"placement": "spread"})"), *f.topology, 65), InputError);
}
