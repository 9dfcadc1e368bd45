#include "sim/place/place.hpp"

#include "sim/core/error.hpp"
#include "sim/scenario/machine.hpp"
#include "sim/tune/analytic.hpp"

#include "topologies/test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

using namespace exasim;

namespace {

using topo::testing::kTinyDragonflyMachine;  // topologies/test_support.hpp

/// 16 GPUs (8 nodes), gx = 2 (inside a node when innermost), gdata = 8.
scenario::Scenario tiny_job() {
  auto doc = nlohmann::json::parse(R"({"model": "gpt-5b", "gpus": 16, "training": {"global_batch": 16},
    "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 1, "gz": 1, "gdata": 8}})");
  doc["machine"] = nlohmann::json::parse(kTinyDragonflyMachine);
  doc["model"] = {{"layers", 2}, {"hidden", 1024}, {"heads", 16}, {"seq_len", 512}, {"vocab", 1024}};
  return scenario::parse_scenario(doc, "tiny.json");
}

struct Fixture {
  scenario::Scenario job = tiny_job();
  std::unique_ptr<topo::Topology> topology = scenario::build_topology(job.machine, job.gpus, job.seed);
};

std::string write_file(const std::string& name, const std::string& text) {
  const auto path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

const place::Candidate& find(const place::SearchResult& r, const std::string& order, std::vector<std::uint8_t> dims) {
  for (const auto& c : r.ranked)
    if (r.orders[c.order].label == order && c.local == 0 && c.dims == dims) return c;
  FAIL("no candidate " << order);
  return r.ranked.front();
}

}  // namespace

TEST_CASE("place: node orders start with the baselines and follow the groups", "[unit]") {
  Fixture f;
  const auto orders = place::node_orders(*f.topology, place::whole_machine(*f.topology), 8);
  REQUIRE(orders.size() > 5);
  CHECK(orders[0].label == "packed");
  CHECK(orders[0].nodes == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(orders[1].label == "spread");  // one node per group in turn: 8 nodes per group
  CHECK(orders[1].nodes == std::vector<std::uint32_t>{0, 8, 16, 24, 1, 9, 17, 25});
  CHECK(orders[2].label == "random 1");
  // On the whole machine, the random policy's own draw (sim/scenario/placement.hpp).
  scenario::PlacementSpec random;
  random.policy = scenario::PlacementPolicy::Random;
  random.seed = 1;
  const auto policy = scenario::place_ranks(random, *f.topology, 16);
  for (std::uint32_t k = 0; k < 8; ++k) CHECK(orders[2].nodes[k] == policy[2 * k] / 2);
  for (const auto& o : orders) {
    CHECK(o.nodes.size() == 8);
    CHECK(std::set<std::uint32_t>(o.nodes.begin(), o.nodes.end()).size() == 8);
  }
  const auto two_by_two = std::find_if(orders.begin(), orders.end(),
                                       [](const auto& o) { return o.label == "round-robin 2 groups x 2 nodes"; });
  REQUIRE(two_by_two != orders.end());
  CHECK(two_by_two->nodes == std::vector<std::uint32_t>{0, 1, 8, 9, 2, 3, 10, 11});
}

TEST_CASE("place: the score's rings on a tiny dragonfly, by hand", "[unit]") {
  Fixture f;
  const auto r = place::search(f.job, *f.topology, place::whole_machine(*f.topology), {});
  // Packed, x innermost: x pairs share a node (GPU link, 100 GB/s). The data ring visits nodes 0..7 of
  // group 0: each node's 2 GPUs send through its one NIC (25 GB/s / 2 flows = 12.5 GB/s), and the
  // local link between neighbouring switches carries both flows too (12.5 GB/s).
  const auto& packed = find(r, "packed", {0, 1, 2, 3});
  CHECK(packed.ring_Bps[0] == Approx(100e9));
  CHECK(packed.ring_Bps[3] == Approx(12.5e9));
  // Spread: consecutive data members are in groups 0,1,2,3,0,...: the one global link 0 -> 1 carries
  // the flows of node 0 -> 8 and node 1 -> 9, 2 GPUs each: 25 GB/s / 4 = 6.25 GB/s.
  const auto& spread = find(r, "spread", {0, 1, 2, 3});
  CHECK(spread.ring_Bps[0] == Approx(100e9));
  CHECK(spread.ring_Bps[3] == Approx(6.25e9));
  // The slower ring makes the slower estimate, and the search ranks by it.
  CHECK(spread.analytic_s > packed.analytic_s);
  CHECK(r.ranked.front().analytic_s <= packed.analytic_s);
  for (std::size_t i = 1; i < r.ranked.size(); ++i) CHECK(r.ranked[i - 1].analytic_s <= r.ranked[i].analytic_s);
  CHECK(r.orders_scored == r.orders.size());
  CHECK_FALSE(r.budget_reached());
}

TEST_CASE("place: a candidate is a permutation of GPUs inside the allocation", "[unit]") {
  Fixture f;
  const auto path = write_file("exasim-place-alloc.txt", "# scheduler order\n20-23\n3,5 , 30\n9\n12\n");
  const auto allocation = place::read_allocation(path, *f.topology, 8);
  CHECK(allocation.nodes == std::vector<std::uint32_t>{20, 21, 22, 23, 3, 5, 30, 9, 12});
  const auto r = place::search(f.job, *f.topology, allocation, {});
  CHECK(r.orders.front().label == "scheduler");
  const std::set<std::uint32_t> allowed(allocation.nodes.begin(), allocation.nodes.end());
  for (const auto& c : r.ranked) {
    const auto gpus = place::gpu_of_rank(r.grid, c.dims, r.orders[c.order].nodes, 2, r.locals[c.local].gpus);
    REQUIRE(gpus.size() == 16);
    CHECK(std::set<std::uint32_t>(gpus.begin(), gpus.end()).size() == 16);
    for (const auto g : gpus) CHECK(allowed.count(g / 2) == 1);
  }
  // Dimensions (data, x): rank r = x + 2 d takes slot d + 8 x: rank 1 (x 1, d 0) on slot 8, the first GPU
  // of the fifth node of the scheduler's order (node 3).
  const auto gpus = place::gpu_of_rank(r.grid, {3, 0, 1, 2}, r.orders.front().nodes, 2);
  CHECK(gpus[0] == 40);
  CHECK(gpus[1] == 2 * 3);
  CHECK(gpus[2] == 41);
}

TEST_CASE("place: local orders put rings on the fast GPU links of uneven nodes", "[unit]") {
  // Frontier's MI250X node: GCD pairs (0,1), (2,3), (4,5), (6,7) share a package at 200 GB/s, the rest
  // are 50-100 GB/s links or two hops (topologies/gpu_links.cpp).
  auto doc = nlohmann::json::parse(R"({"model": "gpt-5b", "machine": "frontier", "gpus": 8,
    "training": {"global_batch": 8}, "parallel": {"scheme": "axonn4d", "gx": 4, "gy": 2, "gz": 1, "gdata": 1}})");
  const auto s = scenario::parse_scenario(doc, "f.json");
  const auto topology = scenario::build_topology(s.machine, s.gpus, s.seed);
  const auto locals = place::local_orders(*topology, {4, 2});
  REQUIRE(locals.size() == 2);
  CHECK(locals[0].label == "gpus 0,1,2,3,4,5,6,7");
  // Every ring of 4 keeps two same-package pairs together.
  const auto& g = locals[1].gpus;
  for (std::size_t ring = 0; ring < 2; ++ring) {
    std::set<std::uint32_t> packages;
    for (std::size_t i = 0; i < 4; ++i) packages.insert(g[4 * ring + i] / 2);
    CHECK(packages.size() == 2);
  }
  // Alike GPUs (the tiny machine's 2 per node): the identity only.
  Fixture f;
  CHECK(place::local_orders(*f.topology, {2, 8}).size() == 1);
}

TEST_CASE("place: a bad node list names the file, the line and what is allowed", "[unit]") {
  Fixture f;
  auto error_of = [&](const std::string& text, std::uint32_t needed = 8) -> std::string {
    const auto path = write_file("exasim-place-bad.txt", text);
    try {
      (void)place::read_allocation(path, *f.topology, needed);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(error_of("0-7\nseven\n"), Catch::Contains("line 2: 'seven' is not a node id: expected node ids"));
  CHECK_THAT(error_of("0-7,7\n"), Catch::Contains("line 1: node 7 is listed twice"));
  CHECK_THAT(error_of("0-40\n"), Catch::Contains("node 40 does not exist: the machine has nodes 0-31"));
  CHECK_THAT(error_of("9-3\n"), Catch::Contains("range '9-3' ends before it starts"));
  CHECK_THAT(error_of("0-3\n"), Catch::Contains("--nodes: lists 4 nodes, the job needs 8"));
  CHECK_THAT(error_of("1-\n"), Catch::Contains("'' is not a node id"));
  try {
    (void)place::read_allocation("/nonexistent/nodes.txt", *f.topology, 8);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("/nonexistent/nodes.txt: --nodes: cannot open the node list"));
  }
}

TEST_CASE("place: a budget that runs out still scores the baselines, and says so", "[unit]") {
  Fixture f;
  const auto r = place::search(f.job, *f.topology, place::whole_machine(*f.topology), {1e-9});
  // packed, spread, random 1-3 are scored whatever the budget; the first other order is not started.
  CHECK(r.orders_scored == 5);
  CHECK(r.budget_reached());
  CHECK(r.ranked.size() == 5 * r.locals.size() * r.dim_orders);
  for (const auto& c : r.ranked) CHECK(r.orders[c.order].baseline);
}

TEST_CASE("place: a Megatron layout is scored by its tune estimate under each placement", "[unit]") {
  // Megatron's stages run different streams: each candidate is priced by the scheme's estimate with the
  // rings routed under its rank -> GPU vector. CP's group is a view of dp x cp: it moves with it.
  auto doc = tiny_job().resolved;
  doc["parallel"] = {{"scheme", "megatron"}, {"tp", 2}, {"cp", 2}, {"pp", 1}, {"dp", 4}};
  const auto job = scenario::parse_scenario(doc, "cp.json");
  const auto topology = scenario::build_topology(job.machine, job.gpus, job.seed);
  const auto r = place::search(job, *topology, place::whole_machine(*topology), {});
  REQUIRE(r.grid.dims().size() == 4);  // tp, dp_cp, pp, and cp nested in dp_cp
  CHECK(r.grid.dim(3).nested);
  CHECK(r.dim_orders == 2);  // tp or dp_cp innermost; pp has one member
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) {
    CHECK(c.dims.back() == 3);
    CHECK(c.ring_Bps.size() == 4);
  }
  // The packed baseline with the grid's own order puts rank r on GPU r, the view ignored, and scores
  // what tune's estimate gives the scenario's own (packed) placement.
  const std::vector<std::uint8_t> identity = {0, 1, 2, 3};
  CHECK(place::dims_label(r.grid, identity) == "tp,dp_cp,pp");
  const auto gpus = place::gpu_of_rank(r.grid, identity, r.orders[0].nodes, topology->gpus_per_node());
  for (std::uint32_t rank = 0; rank < gpus.size(); ++rank) CHECK(gpus[rank] == rank);
  const auto packed = std::find_if(r.ranked.begin(), r.ranked.end(), [&](const place::Candidate& c) {
    return c.order == 0 && c.local == 0 && c.dims == identity;
  });
  REQUIRE(packed != r.ranked.end());
  tune::AnalyticModel model(job);
  model.prepare(job);
  CHECK(packed->analytic_s == Approx(model.iteration_s(job)).epsilon(1e-12));
}
