#include "emu/collectives/group_layout.hpp"

#include "sim/scenario/prepared_job.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace exasim;
using collectives::Algorithm;
using schedule::CollKind;

namespace {

/// The hierarchical validation case: 8 ranks on nodes of 4 (unless overridden), gx=2 x gy=4.
std::unique_ptr<scenario::PreparedJob> hierarchical_case(const std::vector<std::string>& overrides = {}) {
  const auto s =
      scenario::load_scenario(std::string(EXASIM_TEST_DATA_DIR) + "/validate/cases/hierarchical-x2-y4.json", overrides);
  return scenario::prepare_job(s);
}

/// The collective of `rank`'s group along `dim`, as the emulation builds it.
collectives::GroupCall call_of(const runtime::Job& job, schedule::Rank rank, std::uint8_t dim,
                               CollKind kind = CollKind::AllReduce) {
  const auto& grid = job.plan->grid;
  return runtime::group_call(job, grid.group_member(rank, dim, 0), dim, grid.group_id(rank, dim), 0, kind, 1 << 20);
}

emu::MemberPlace place_of(const scenario::PreparedJob& p, schedule::Rank rank, std::uint8_t dim) {
  return emu::member_place(*p.topology, call_of(p.job, rank, dim), p.plan.grid.coord(rank, dim));
}

constexpr std::uint8_t kX = 0, kY = 1;

}  // namespace

TEST_CASE("member place: y groups of the hierarchical case hold 2 members on each of 2 nodes", "[unit]") {
  const auto p = hierarchical_case();
  CHECK_FALSE(place_of(*p, 5, kX).hierarchical);  // x groups {2k, 2k+1} sit inside one node
  // The y group of rank 6 is {0, 2, 4, 6} on nodes 0, 0, 1, 1: rank 6 is the second member of node 1.
  const auto six = place_of(*p, 6, kY);
  CHECK(six.hierarchical);
  CHECK(six.node == 1);
  CHECK(six.local_index == 1);
  const auto four = place_of(*p, 4, kY);
  CHECK(four.node == 1);
  CHECK(four.local_index == 0);
  CHECK(place_of(*p, 3, kY).node == 0);  // y group {1, 3, 5, 7}
  CHECK(place_of(*p, 3, kY).local_index == 1);
}

TEST_CASE("member place: uneven nodes and a single node rule hierarchical out", "[unit]") {
  // Nodes of 3: the y group {0, 2, 4, 6} is on nodes 0, 0, 1, 2.
  const auto uneven = hierarchical_case({"machine.node.gpus=3", "machine.node.nics=3"});
  CHECK_FALSE(place_of(*uneven, 0, kY).hierarchical);
  CHECK(place_of(*uneven, 6, kY).node == 2);
  // One node of 8: every group inside it.
  const auto one = hierarchical_case({"machine.node.gpus=8", "machine.node.nics=8"});
  CHECK_FALSE(place_of(*one, 0, kY).hierarchical);
}

TEST_CASE("emulated algorithm: the router's choice, refused where the emulation cannot run it", "[unit]") {
  const auto p = hierarchical_case();
  const auto& job = p->job;
  const auto& topo = *p->topology;
  auto algorithm = [&](Algorithm requested, std::uint8_t dim, CollKind kind) {
    return emu::emulated_algorithm(requested, topo, call_of(job, 0, dim, kind), place_of(*p, 0, dim).hierarchical);
  };
  CHECK(algorithm(Algorithm::Ring, kY, CollKind::AllReduce) == Algorithm::Ring);
  CHECK(algorithm(Algorithm::Tree, kY, CollKind::AllReduce) == Algorithm::Tree);
  CHECK(algorithm(Algorithm::Tree, kY, CollKind::AllGather) == Algorithm::Ring);  // tree: all-reduce only
  CHECK(algorithm(Algorithm::Tree, kY, CollKind::ReduceScatter) == Algorithm::Ring);
  CHECK(algorithm(Algorithm::Hierarchical, kY, CollKind::AllReduce) == Algorithm::Hierarchical);
  CHECK(algorithm(Algorithm::Hierarchical, kY, CollKind::AllGather) == Algorithm::Hierarchical);
  CHECK(algorithm(Algorithm::Hierarchical, kY, CollKind::ReduceScatter) == Algorithm::Hierarchical);
  CHECK(algorithm(Algorithm::Hierarchical, kX, CollKind::AllReduce) == Algorithm::Ring);  // one node
  CHECK(algorithm(Algorithm::Nccl, kY, CollKind::AllReduce) == Algorithm::Ring);          // no GPU library: its ring
  CHECK(algorithm(Algorithm::Direct, kY, CollKind::AllGather) == Algorithm::Direct);
  CHECK(algorithm(Algorithm::Direct, kX, CollKind::AllReduce) == Algorithm::Direct);
  for (std::uint8_t dim : {kX, kY})
    for (CollKind kind : {CollKind::AllReduce, CollKind::AllGather, CollKind::ReduceScatter}) {
      CAPTURE(static_cast<int>(dim), schedule::to_string(kind));
      const Algorithm chosen = algorithm(Algorithm::Auto, dim, kind);
      CHECK(chosen != Algorithm::Auto);
      CHECK(chosen == collectives::resolve_algorithm(Algorithm::Auto, topo, call_of(job, 0, dim, kind)));
    }
  // A group whose sub-communicators were not made cannot run hierarchical: an error, never a hang.
  CHECK_THROWS_AS(emu::emulated_algorithm(Algorithm::Hierarchical, topo, call_of(job, 0, kY), false), std::logic_error);
}
