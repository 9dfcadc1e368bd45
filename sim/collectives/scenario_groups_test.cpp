// The router on the real groups of a shipped scenario (Perlmutter, 4,096 A100s, AxoNN 4D 2 x 4 x 8 x 64,
// packed): every algorithm the key can name, resolved and routed for the first collective of each kind
// rank 0 posts along each dimension. No runtime runs: this checks the groups, not the timing.
#include "sim/collectives/group_layout.hpp"
#include "sim/collectives/internal/cost_model.hpp"
#include "sim/collectives/router.hpp"
#include "sim/runtime/runtime.hpp"
#include "sim/scenario/prepared_job.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using namespace exasim;
using namespace exasim::collectives;

TEST_CASE("each algorithm resolves and routes the groups of the Perlmutter scenario", "[integration]") {
  const std::string path = std::string(EXASIM_TEST_DATA_DIR) + "/configs/scenarios/perlmutter-gpt-40b-4096.json";
  for (Algorithm requested : kAlgorithms) {
    CAPTURE(to_string(requested));
    // The scenario has no "collectives" object, so --set sets the whole object (every object on a --set
    // path must exist).
    const auto s =
        scenario::load_scenario(path, {R"(collectives={"algorithm": ")" + std::string(to_string(requested)) + R"("})"});
    REQUIRE(s.collective_algorithm == requested);
    const auto job = scenario::prepare_job(s);
    REQUIRE(job->job.collective_algorithm == requested);
    const auto& grid = job->plan.grid;
    const auto& topology = *job->topology;
    REQUIRE(grid.dims().size() == 4);  // x 2, y 4, z 8, data 64

    // The first collective of each (dimension, kind) rank 0 posts.
    std::map<std::pair<std::uint8_t, CollKind>, double> firsts;
    for (const auto& op : job->plan.stream_of(0).ops)
      if (op.type == schedule::OpType::CollStart) firsts.emplace(std::pair{op.dim, op.coll}, op.bytes);
    REQUIRE(firsts.size() >= 4);

    for (const auto& [key, bytes] : firsts) {
      const auto [dim, kind] = key;
      CAPTURE(static_cast<int>(dim), schedule::to_string(kind), bytes);
      const auto call = runtime::group_call(job->job, 0, dim, grid.group_id(0, dim), 0, kind, bytes);
      const std::uint32_t p = call.size();
      const GroupLayout layout = group_layout(topology, call);
      // Packed on 4-GPU nodes: x (stride 1) in one node; y (stride 2) two per node on 2 nodes; z and data
      // one per node.
      const std::uint32_t expected_nodes[] = {1, 2, 8, 64}, expected_per_node[] = {2, 2, 1, 1};
      CHECK(layout.nodes == expected_nodes[dim]);
      CHECK(layout.per_node == expected_per_node[dim]);

      const Algorithm resolved = resolve_algorithm(requested, topology, call);
      switch (requested) {
        case Algorithm::Ring: CHECK(resolved == Algorithm::Ring); break;
        case Algorithm::Tree:
          CHECK(resolved == (kind == CollKind::AllReduce ? Algorithm::Tree : Algorithm::Ring));
          break;
        case Algorithm::Hierarchical: CHECK(resolved == (dim == 1 ? Algorithm::Hierarchical : Algorithm::Ring)); break;
        case Algorithm::Auto: {
          const auto in = cost_inputs(topology, call, layout);
          CHECK(resolved != Algorithm::Auto);
          CHECK(applies(resolved, kind, in));
          CHECK(estimate_s(resolved, kind, in, bytes) <= estimate_s(Algorithm::Ring, kind, in, bytes));
          break;
        }
        case Algorithm::Nccl: CHECK(resolved == Algorithm::Nccl); break;
        case Algorithm::Direct: CHECK(resolved == Algorithm::Direct); break;
      }

      // Route every stage; rank 0's bytes over the stages must be the resolved algorithm's closed form.
      const std::uint32_t stages = stage_count(resolved, topology, call);
      double rank0 = 0;
      StageRoute out;
      for (std::uint32_t st = 0; st < stages; ++st) {
        std::size_t hops = 0;
        route_stage(
            resolved, topology, call, st, nullptr, [&](const topo::LinkId*, std::size_t) { ++hops; }, out);
        std::size_t linked = 0;
        for (const auto& bundle : out.bundles) linked += bundle.count;
        CHECK(linked == out.links.size());
        CHECK(out.latency_s > 0);
        rank0 += out.rank0_wire_bytes;
        if (resolved == Algorithm::Ring) {
          CHECK(out.bundles.size() == 1);
          CHECK(hops == p);
        } else if (resolved == Algorithm::Tree) {
          CHECK(out.bundles.size() == 2);
          CHECK(hops == 4 * (p - 1));
        } else if (resolved == Algorithm::Nccl) {
          CHECK(hops >= p);  // a ring's p hops (+ one over NVLink per node and channel), or a tree's
        } else if (resolved == Algorithm::Direct) {
          CHECK(hops == p * (p - 1));  // every ordered pair
        } else {
          CHECK(hops == p);  // every member sends one hop per stage
        }
      }
      switch (resolved) {
        case Algorithm::Ring:
        case Algorithm::Nccl: CHECK(rank0 == Approx(ring_wire_bytes(kind, p, bytes))); break;
        case Algorithm::Tree: CHECK(rank0 == Approx(tree_wire_bytes(p, 0, bytes))); break;
        case Algorithm::Direct: CHECK(rank0 == Approx(direct_wire_bytes(kind, p, bytes))); break;
        default: CHECK(rank0 == Approx(hierarchical_wire_bytes(kind, layout.nodes, layout.per_node, bytes)));
      }
    }
  }
}
