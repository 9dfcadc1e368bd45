#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

#include <catch2/catch.hpp>

using namespace exasim;

namespace {
nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "machine": "simple-a100", "model": "gpt-5b", "gpus": 64,
    "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 8},
    "training": {"global_batch": 512, "recompute": "full"}})");
}
}  // namespace

TEST_CASE("presets are inlined and --set overrides any field", "[unit]") {
  auto s = scenario::parse_scenario(base(), "s.json", {"machine.node.nic_bandwidth_Bps=50e9", "model.layers=12"});
  CHECK(s.machine.name == "simple-a100");
  CHECK(s.machine.node.nic_bandwidth_Bps == 50e9);
  CHECK(s.model.layers == 12);
  CHECK(s.model.hidden == 4096);
  CHECK(s.overlap.oar);
  CHECK_FALSE(s.overlap.dp);
  CHECK(s.resolved["machine"]["node"]["nic_bandwidth_Bps"] == 50e9);
  // A whole preset can be swapped too.
  auto t = scenario::parse_scenario(base(), "s.json", {"model=gpt-10b", "parallel.gy=4", "parallel.gdata=4"});
  CHECK(t.model.hidden == 5120);
}

TEST_CASE("errors in a preset's fields name the preset file", "[unit]") {
  CHECK_THROWS_WITH(scenario::parse_scenario(base(), "s.json", {"model.layers=-1"}),
                    Catch::Contains("configs/models/gpt-5b.json: model.layers: must be an integer"));
}
