#include "sim/flow/flow_network.hpp"
#include "sim/flow/internal/test_predictions.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace exasim;
using flow::FlowNetwork;
using flow::Solver;
using flow::testing::Predictions;

namespace {
constexpr Solver kSolvers[] = {Solver::Local, Solver::Components, Solver::Reference};
}  // namespace

TEST_CASE("two equal flows on one link each get half of it", "[unit]") {
  for (const Solver solver : kSolvers) {
    FlowNetwork net({{10e9, 0, topo::LinkClass::NicUp}}, solver);
    Predictions p;
    auto a = net.add({0}, 1e9, 1);
    auto b = net.add({0}, 1e9, 2);
    net.resolve(0, p.scheduler());
    CHECK(net.rate_Bps(a) == Approx(5e9));
    CHECK(net.rate_Bps(b) == Approx(5e9));
    CHECK(p.finish[a] == Approx(0.2));
  }
}

TEST_CASE("max-min: a flow limited elsewhere leaves the rest of the shared link to others", "[unit]") {
  // Link 0: 10 GB/s shared by A and B; link 1: 2 GB/s carries B too. B is held to 2, A gets 8.
  FlowNetwork net({{10e9, 0, topo::LinkClass::Local}, {2e9, 0, topo::LinkClass::Global}}, Solver::Local);
  Predictions p;
  auto a = net.add({0}, 8e9, 1);
  auto b = net.add({0, 1}, 2e9, 2);
  net.resolve(0, p.scheduler());
  CHECK(net.rate_Bps(a) == Approx(8e9));
  CHECK(net.rate_Bps(b) == Approx(2e9));
  CHECK(p.finish[a] == Approx(1.0));
  CHECK(p.finish[b] == Approx(1.0));
}

TEST_CASE("when a flow ends the survivors speed up and their finish is re-predicted", "[unit]") {
  FlowNetwork net({{10e9, 0, topo::LinkClass::NicUp}}, Solver::Local);
  Predictions p;
  auto a = net.add({0}, 1e9, 1);
  auto b = net.add({0}, 3e9, 2);
  net.resolve(0, p.scheduler());
  CHECK(p.finish[a] == Approx(0.2));
  net.finish(a);
  net.resolve(0.2, p.scheduler());
  // B sent 1 GB at 5 GB/s, then 2 GB at 10 GB/s.
  CHECK(p.finish[b] == Approx(0.4));
  CHECK(net.active_flows() == 1);
}

TEST_CASE("a bundle crossing a link twice takes two shares of it", "[unit]") {
  // Link 0 (10 GB/s) carries the bundle twice and flow B once: three entries, 10/3 GB/s each, so the
  // bundle moves at 3.33 GB/s (using 6.67 of the link). When B ends, the bundle gets 5 GB/s.
  for (const Solver solver : kSolvers) {
    FlowNetwork net({{10e9, 0, topo::LinkClass::NicUp}, {100e9, 0, topo::LinkClass::Local}}, solver);
    Predictions p;
    auto bundle = net.add({0, 1, 0}, 10e9, 1);
    auto b = net.add({0}, 1e9, 2);
    CHECK(net.load(0) == 3);
    net.resolve(0, p.scheduler());
    CHECK(net.rate_Bps(bundle) == Approx(10e9 / 3));
    CHECK(net.rate_Bps(b) == Approx(10e9 / 3));
    net.finish(b);
    net.resolve(p.finish[b], p.scheduler());
    CHECK(net.rate_Bps(bundle) == Approx(5e9));
    CHECK(net.load(0) == 2);
    net.finish(bundle);
    CHECK(net.load(0) == 0);
    CHECK(net.active_flows() == 0);
  }
}

TEST_CASE("held links count as load until the flow that takes them is added", "[unit]") {
  FlowNetwork net({{10e9, 0, topo::LinkClass::NicUp}, {10e9, 0, topo::LinkClass::NicUp}}, Solver::Local);
  const std::vector<topo::LinkId> hop{0, 1}, back{0};
  net.hold(hop.data(), hop.size());
  CHECK(net.load(0) == 1);
  net.hold(back.data(), back.size());
  CHECK(net.load(0) == 2);
  net.add({0, 1, 0}, 1e9, 1);  // the bundle of both hops: its entries take the holds, the load stays
  CHECK(net.load(0) == 2);
  CHECK(net.load(1) == 1);
  net.add({0, 1}, 1e9, 2);  // no hold pending: a flow's entries add to the load
  CHECK(net.load(0) == 3);
  CHECK(net.load(1) == 2);
}

TEST_CASE("only links from first_held() on are held", "[unit]") {
  // Link 0 is one routing never reads (a NIC link): a hop's hold skips it, and the bundle's entry
  // on it adds to the load when the bundle starts.
  FlowNetwork net({{10e9, 0, topo::LinkClass::NicUp}, {10e9, 0, topo::LinkClass::Local}}, Solver::Local);
  net.set_first_held(1);
  const std::vector<topo::LinkId> hop{0, 1};
  net.hold(hop.data(), hop.size());
  CHECK(net.load(0) == 0);
  CHECK(net.load(1) == 1);
  net.add({0, 1}, 1e9, 1);
  CHECK(net.load(0) == 1);
  CHECK(net.load(1) == 1);
}

TEST_CASE("a flow that takes more holds than are pending is a logic error", "[unit]") {
  FlowNetwork net({{10e9, 0, topo::LinkClass::NicUp}, {10e9, 0, topo::LinkClass::NicUp}}, Solver::Local);
  const std::vector<topo::LinkId> hop{0};
  net.hold(hop.data(), hop.size());
  CHECK_THROWS_WITH(net.add({0, 1}, 1e9, 1), Catch::Contains("takes 2 holds, but only 1 are pending"));
}

TEST_CASE("flows on the same route share a path and still finish on their own bytes", "[unit]") {
  // Links 0 and 1 (10 GB/s each). A and B take route {0, 1}, C takes {0}: three flows on link 0, so
  // each gets 10/3 GB/s. A and B are one path (weight 2); C, which starts on the same link, is not.
  for (const Solver solver : kSolvers) {
    FlowNetwork net({{10e9, 0, topo::LinkClass::NicUp}, {10e9, 0, topo::LinkClass::Local}}, solver);
    Predictions p;
    auto a = net.add({0, 1}, 1e9, 1);
    auto b = net.add({0, 1}, 2e9, 2);
    auto c = net.add({0}, 10e9, 3);
    CHECK(net.active_paths() == 2);
    CHECK(net.load(0) == 3);
    CHECK(net.load(1) == 2);
    net.resolve(0, p.scheduler());
    CHECK(net.rate_Bps(a) == Approx(10e9 / 3));
    CHECK(net.rate_Bps(b) == Approx(10e9 / 3));
    CHECK(p.finish[a] == Approx(0.3));
    CHECK(net.finish(a) == 1);
    CHECK(net.active_paths() == 2);  // B still takes the path
    net.resolve(p.finish[a], p.scheduler());
    // B sent 1 GB; the rest goes at 5 GB/s, as does C.
    CHECK(net.rate_Bps(b) == Approx(5e9));
    CHECK(p.finish[b] == Approx(0.3 + 0.2));
    net.finish(b);
    CHECK(net.active_paths() == 1);
    CHECK(net.load(1) == 0);
    net.resolve(p.finish[b], p.scheduler());
    CHECK(net.rate_Bps(c) == Approx(10e9));
  }
}

TEST_CASE("a busy link keeps every path's share as paths come and go", "[unit]") {
  // Link 0 (12 GB/s) is shared by up to 12 paths, each with a private second link of ample capacity:
  // the link's entries spill out of the link record, grow twice, shrink back inside and spill again.
  std::vector<topo::Link> links{{12e9, 0, topo::LinkClass::Global}};
  for (int i = 0; i < 12; ++i) links.push_back({100e9, 0, topo::LinkClass::NicUp});
  for (const Solver solver : kSolvers) {
    FlowNetwork net(links, solver);
    Predictions p;
    std::vector<flow::FlowId> ids;
    for (topo::LinkId i = 1; i <= 12; ++i) ids.push_back(net.add({0, i}, 1e9, i));
    net.resolve(0, p.scheduler());
    CHECK(net.active_paths() == 12);
    for (auto id : ids) CHECK(net.rate_Bps(id) == Approx(1e9));
    // The first ten end; the last two split the link, then a newcomer makes three again.
    for (int i = 0; i < 10; ++i) CHECK(net.finish(ids[i]) == static_cast<std::uint64_t>(i + 1));
    net.resolve(1, p.scheduler());
    CHECK(net.rate_Bps(ids[10]) == Approx(6e9));
    CHECK(net.finish(ids[10]) == 11);
    net.resolve(1, p.scheduler());
    CHECK(net.rate_Bps(ids[11]) == Approx(12e9));
    const auto again = net.add({0, 3}, 1e9, 13);
    const auto more = net.add({0, 4}, 1e9, 14);
    net.resolve(1, p.scheduler());
    CHECK(net.rate_Bps(ids[11]) == Approx(4e9));
    CHECK(net.rate_Bps(again) == Approx(4e9));
    CHECK(net.rate_Bps(more) == Approx(4e9));
    CHECK(net.active_paths() == 3);
  }
}

TEST_CASE("the component solver gives the reference solver's rates bit for bit under random traffic", "[unit]") {
  // 40 links of 40 distinct capacities (more than a route entry's capacity class can name, so some
  // lone links look their capacity up in the link record), routes of 1 to 6 links with repeats, flows
  // coming and going: links turn from lone (one path's) to shared and back all the time, and the
  // incremental solver's tightest-lone-link keys must pop where the reference solver's links do.
  std::vector<topo::Link> links;
  for (int i = 0; i < 40; ++i) links.push_back({1e9 * (1 + i % 7) + 1e6 * i, 0, topo::LinkClass::Local});
  FlowNetwork fast(links, Solver::Components);
  FlowNetwork reference(links, Solver::Reference);
  Predictions fast_p;
  Predictions reference_p;
  std::uint64_t state = 12345;
  const auto next = [&state](std::uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  std::vector<std::pair<flow::FlowId, flow::FlowId>> active;
  std::size_t checked = 0;
  for (int step = 0; step < 400; ++step) {
    const int changes = 1 + static_cast<int>(next(3));
    for (int c = 0; c < changes; ++c) {
      if (!active.empty() && next(5) < 2) {
        const std::size_t i = next(active.size());
        CHECK(fast.finish(active[i].first) == reference.finish(active[i].second));
        active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        std::vector<topo::LinkId> route(1 + next(6));
        for (auto& l : route) l = static_cast<topo::LinkId>(next(links.size()));
        const double bytes = 1e6 * static_cast<double>(1 + next(100));
        active.emplace_back(fast.add(route, bytes, step), reference.add(route, bytes, step));
      }
    }
    fast.resolve(step * 1e-3, fast_p.scheduler());
    reference.resolve(step * 1e-3, reference_p.scheduler());
    for (const auto& [f, r] : active) {
      REQUIRE(fast.rate_Bps(f) == reference.rate_Bps(r));
      REQUIRE(fast_p.finish[f] == reference_p.finish[r]);
      ++checked;
    }
  }
  CHECK(checked > 1000);
}

TEST_CASE("the local solver carries a change along the paths it moves, and back", "[unit]") {
  // A parking lot: a long path over links 0-3 (10 GB/s each) and one short path per link. Each link
  // splits evenly: 5 GB/s for everyone. A second short flow on link 0 holds the long path to 10/3,
  // which hands links 1-3 to their short paths (20/3 each) although the change touched link 0 only.
  std::vector<topo::Link> links(4, {10e9, 0, topo::LinkClass::Global});
  for (const Solver solver : kSolvers) {
    FlowNetwork net(links, solver);
    Predictions p;
    const auto along = net.add({0, 1, 2, 3}, 1e12, 0);
    std::vector<flow::FlowId> shorts;
    for (topo::LinkId l = 0; l < 4; ++l) shorts.push_back(net.add({l}, 1e12, l + 1));
    net.resolve(0, p.scheduler());
    CHECK(net.rate_Bps(along) == Approx(5e9));
    for (const auto id : shorts) CHECK(net.rate_Bps(id) == Approx(5e9));
    const auto extra = net.add({0}, 1e12, 9);
    net.resolve(1, p.scheduler());
    CHECK(net.rate_Bps(along) == Approx(10e9 / 3));
    CHECK(net.rate_Bps(extra) == Approx(10e9 / 3));
    CHECK(net.rate_Bps(shorts[0]) == Approx(10e9 / 3));
    for (int l = 1; l < 4; ++l) CHECK(net.rate_Bps(shorts[l]) == Approx(20e9 / 3));
    net.finish(extra);
    net.resolve(2, p.scheduler());
    CHECK(net.rate_Bps(along) == Approx(5e9));
    for (const auto id : shorts) CHECK(net.rate_Bps(id) == Approx(5e9));
  }
}

TEST_CASE("the local solver gives the reference solver's rates under random traffic", "[unit]") {
  // Larger and more tangled than the component test: links of 4 capacities (ties everywhere, as in a
  // real machine), routes of 1 to 12 links with repeats drawn from a pool of 40 (so paths often carry
  // several flows, and flows join paths whose old rate then overfills a link), bursts of arrivals,
  // and completions when the reference predicts them. Few links make changes spread far (many held
  // paths released), many links keep them local. The local filling must reach the unique max-min
  // rates; it sums residuals in another order, so rates and predicted ends agree to rounding. The
  // last machine has routes of up to 150 links over 2,048, as ring bundles of large runs do: masks of
  // shared entries longer than one word, and paths mostly lone or mostly shared (enter_region()
  // walks those two kinds differently).
  struct Machine {
    int link_count;
    std::uint64_t seed;
    std::uint64_t longest_route;
  };
  // Each machine runs with and without sleeping links (set_sleeping()), which must not move a rate
  // beyond rounding, and must sleep and wake links along the way.
  for (const bool sleeping : {false, true})
    for (const auto& [link_count, seed, longest_route] :
         {Machine{64, 2024, 12}, Machine{16, 7, 12}, Machine{128, 99, 12}, Machine{2048, 5, 150}}) {
      INFO(link_count << " links, seed " << seed << ", routes of up to " << longest_route << " links"
                      << (sleeping ? ", sleeping links" : ""));
      std::vector<topo::Link> links;
      for (int i = 0; i < link_count; ++i) links.push_back({25e9 * (1 + i % 4), 0, topo::LinkClass::Global});
      std::uint64_t state = seed;
      const auto next = [&state](std::uint64_t n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % n;
      };
      std::vector<std::vector<topo::LinkId>> pool(40);
      for (auto& route : pool) {
        route.resize(1 + next(longest_route));
        for (auto& l : route) l = static_cast<topo::LinkId>(next(links.size()));
      }
      FlowNetwork local(links, Solver::Local);
      local.set_sleeping(sleeping ? FlowNetwork::Sleeping::On : FlowNetwork::Sleeping::Off);
      FlowNetwork reference(links, Solver::Reference);
      Predictions local_p;
      Predictions reference_p;
      std::vector<std::pair<flow::FlowId, flow::FlowId>> active;
      std::size_t checked = 0;
      double worst = 0, now = 0;
      for (int step = 0; step < 3000; ++step) {
        if (active.size() < 8 || (active.size() < 60 && next(2) == 0)) {
          for (int c = 1 + static_cast<int>(next(5)); c > 0; --c) {
            const auto& route = pool[next(pool.size())];
            const double bytes = 1e6 * static_cast<double>(1 + next(100));
            active.emplace_back(local.add(route, bytes, step), reference.add(route, bytes, step));
          }
        } else {  // the next completion the reference predicts, in both
          std::size_t first = 0;
          for (std::size_t i = 1; i < active.size(); ++i)
            if (reference_p.finish[active[i].second] < reference_p.finish[active[first].second]) first = i;
          now = reference_p.finish[active[first].second];
          CHECK(local.finish(active[first].first) == reference.finish(active[first].second));
          active.erase(active.begin() + static_cast<std::ptrdiff_t>(first));
        }
        local.resolve(now, local_p.scheduler());
        reference.resolve(now, reference_p.scheduler());
        for (const auto& [l, r] : active) {
          const double want = reference.rate_Bps(r);
          INFO("step " << step << ": local rate " << local.rate_Bps(l) << ", reference " << want);
          REQUIRE(local.rate_Bps(l) == Approx(want).epsilon(1e-12));
          REQUIRE(local_p.finish[l] == Approx(reference_p.finish[r]).epsilon(1e-12));
          worst = std::max(worst, std::abs(local.rate_Bps(l) - want) / want);
          ++checked;
        }
      }
      INFO("worst relative rate difference " << worst << "; " << local.counters().sleeps << " sleeps, "
                                             << local.counters().wakes << " wakes");
      CHECK(worst < 1e-12);
      CHECK(checked > 50000);
      if (sleeping) {
        CHECK(local.counters().sleeps > 100);
        CHECK(local.counters().wakes > 100);
      } else {
        CHECK(local.counters().sleeps == 0);
      }
    }
}

TEST_CASE("a path's tightest lone link is found again when its flow count changes", "[unit]") {
  // Q (2 flows) crosses link 1 (8 GB/s) and link 2 (1 GB/s); P crosses link 0 alone (2.4 GB/s),
  // link 1 and link 3 (3.9 GB/s) with R. When P joins link 1 it sleeps: 2 flows, room for 4, an
  // allowance of 2 GB/s a flow, which is P's tightest lone key (link 0 gives 2.4), but P runs at 1.95
  // on link 3. A second flow on P makes link 0 its tightest lone link (1.2 a flow, under link 3's
  // 1.3): a solver that remembered the allowance would give P and R 1.3, not 1.2 and 1.5. When the
  // flow ends, P is back at 1.95.
  const std::vector<topo::Link> links{{2.4e9, 0, topo::LinkClass::NicUp},
                                      {8e9, 0, topo::LinkClass::Local},
                                      {1e9, 0, topo::LinkClass::Global},
                                      {3.9e9, 0, topo::LinkClass::Global},
                                      {10e9, 0, topo::LinkClass::NicDown}};
  FlowNetwork local(links, Solver::Local);
  local.set_sleeping(FlowNetwork::Sleeping::On);
  FlowNetwork reference(links, Solver::Reference);
  Predictions local_p, reference_p;
  std::vector<std::pair<flow::FlowId, flow::FlowId>> flows;
  const auto add = [&](const std::vector<topo::LinkId>& route) {
    flows.emplace_back(local.add(route, 1e12, flows.size()), reference.add(route, 1e12, flows.size()));
    return flows.back().first;
  };
  const auto solve_and_compare = [&] {
    local.resolve(0, local_p.scheduler());
    reference.resolve(0, reference_p.scheduler());
    for (const auto& [l, r] : flows) CHECK(local.rate_Bps(l) == Approx(reference.rate_Bps(r)).epsilon(1e-12));
  };
  const std::vector<topo::LinkId> p_route{0, 1, 3};
  add({1, 2});
  add({1, 2});
  const flow::FlowId r = add({3, 4});
  const flow::FlowId p = add(p_route);
  solve_and_compare();
  CHECK(local.counters().sleeps == 1);
  CHECK(local.rate_Bps(p) == Approx(1.95e9));
  add(p_route);  // P's second flow
  solve_and_compare();
  CHECK(local.counters().wakes == 0);  // link 1 has 4 flows: still within its room
  CHECK(local.rate_Bps(p) == Approx(1.2e9));
  CHECK(local.rate_Bps(r) == Approx(1.5e9));
  local.finish(flows.back().first);
  reference.finish(flows.back().second);
  flows.pop_back();
  solve_and_compare();
  CHECK(local.rate_Bps(p) == Approx(1.95e9));
}

TEST_CASE("a machine with more distinct link capacities than a link record can name is refused", "[unit]") {
  std::vector<topo::Link> links;
  for (int i = 0; i < (1 << 15); ++i) links.push_back({1e9 + i, 0, topo::LinkClass::Global});
  CHECK_NOTHROW(FlowNetwork(links, Solver::Local));
  links.push_back({0.5e9, 0, topo::LinkClass::Global});
  CHECK_THROWS_WITH(FlowNetwork(links, Solver::Local), Catch::Contains("more than 32768 distinct link capacities"));
}

TEST_CASE("the solver counters say which paths a re-solve filled and released", "[unit]") {
  // A runs alone over links 2 and 1, held to 8 GB/s by link 2 (its rate set when it is added). B then
  // crosses links 0 and 1: link 1 saturates at 2 GB/s with A held above that, so A is released (its
  // bottleneck, link 2, did not change) and both freeze at 5 GB/s on link 1.
  for (const Solver solver : {Solver::Local, Solver::Components}) {
    FlowNetwork net(
        {{10e9, 0, topo::LinkClass::NicUp}, {10e9, 0, topo::LinkClass::Local}, {8e9, 0, topo::LinkClass::Global}},
        solver);
    Predictions p;
    auto a = net.add({2, 1}, 1e9, 1);
    net.resolve(0, p.scheduler());
    CHECK(net.rate_Bps(a) == Approx(8e9));
    CHECK(net.counters().resolves == 1);
    CHECK(net.counters().paths_filled == 1);
    CHECK(net.counters().route_entries == 0);  // a lone path gets its rate without a filling
    auto b = net.add({0, 1}, 1e9, 2);
    net.resolve(0.01, p.scheduler());
    CHECK(net.rate_Bps(a) == Approx(5e9));
    CHECK(net.rate_Bps(b) == Approx(5e9));
    const flow::SolverCounters& c = net.counters();
    CHECK(c.resolves == 2);
    CHECK(c.paths_filled == 3);
    CHECK(c.paths_released == (solver == Solver::Local ? 1 : 0));
    CHECK(c.route_entries == 4);       // B's two entries and A's two
    CHECK(c.rate_changes == 3);        // A twice, B once
    net.resolve(0.02, p.scheduler());  // nothing changed: no re-solve
    CHECK(net.counters().resolves == 2);
  }
}

namespace {

/// A machine of `nics` NICs (NIC n: up link 2n, down link 2n + 1, of one of two capacities) and
/// `switches` switch links, and ring bundles over distinct NICs: hop k leaves member k's NIC, crosses
/// one to three switch links, and enters member k + 1's.
struct RingMachine {
  std::vector<topo::Link> links;
  std::vector<std::pair<topo::LinkId, topo::LinkId>> pairs;
  std::vector<std::vector<topo::LinkId>> rings;
  RingMachine(std::uint32_t nics, std::uint32_t switches, std::uint64_t seed) {
    for (std::uint32_t n = 0; n < nics; ++n) {
      const double bw = n % 3 == 0 ? 12.5e9 : 25e9;
      links.push_back({bw, 0, topo::LinkClass::NicUp});
      links.push_back({bw, 0, topo::LinkClass::NicDown});
      pairs.emplace_back(2 * n, 2 * n + 1);
    }
    for (std::uint32_t s = 0; s < switches; ++s) links.push_back({25e9 * (1 + s % 3), 0, topo::LinkClass::Global});
    std::uint64_t state = seed;
    const auto next = [&state](std::uint64_t n) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return (state >> 33) % n;
    };
    for (int r = 0; r < 40; ++r) {
      std::vector<std::uint32_t> members;
      while (members.size() < 2 + next(5)) {
        const auto m = static_cast<std::uint32_t>(next(nics));
        if (std::find(members.begin(), members.end(), m) == members.end()) members.push_back(m);
      }
      std::vector<topo::LinkId> route;
      for (std::size_t k = 0; k < members.size(); ++k) {
        route.push_back(2 * members[k]);
        for (auto hops = 1 + next(3); hops > 0; --hops)
          route.push_back(static_cast<topo::LinkId>(2 * nics + next(switches)));
        route.push_back(2 * members[(k + 1) % members.size()] + 1);
      }
      rings.push_back(route);
    }
  }
};

}  // namespace

TEST_CASE("mirrored NIC down links left out of the paths change no rate", "[unit]") {
  // Rings over distinct NICs cross each member's NIC once up and once down, so a NIC's down link
  // carries the up link's entries: leaving it out must give the same rates, to rounding, as the same
  // solver without it and as the reference solver. Few switch links tie the rings
  // together (changes cascade), and two NIC capacities make NICs the bottleneck of some rings only.
  for (const Solver solver : {Solver::Local, Solver::Components})
    for (const bool sleeping : {false, true}) {
      if (sleeping && solver != Solver::Local) continue;
      INFO((solver == Solver::Local ? "local" : "components") << (sleeping ? ", sleeping links" : ""));
      const RingMachine m(24, 12, 31);
      FlowNetwork mirrored(m.links, solver), plain(m.links, solver), reference(m.links, Solver::Reference);
      mirrored.set_mirrored(m.pairs);
      CHECK(mirrored.mirrored_pairs() == 24);
      for (FlowNetwork* net : {&mirrored, &plain})
        net->set_sleeping(sleeping ? FlowNetwork::Sleeping::On : FlowNetwork::Sleeping::Off);
      Predictions mp, pp, rp;
      std::uint64_t state = 5;
      const auto next = [&state](std::uint64_t n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % n;
      };
      struct Ids {
        flow::FlowId mirrored, plain, reference;
      };
      std::vector<Ids> active;
      std::size_t checked = 0;
      bool same = true;
      double now = 0;
      for (int step = 0; step < 1500; ++step) {
        if (active.size() < 6 || (active.size() < 40 && next(2) == 0)) {
          const auto& route = m.rings[next(m.rings.size())];
          const double bytes = 1e6 * static_cast<double>(1 + next(100));
          active.push_back(
              {mirrored.add(route, bytes, step), plain.add(route, bytes, step), reference.add(route, bytes, step)});
        } else {
          std::size_t first = 0;
          for (std::size_t i = 1; i < active.size(); ++i)
            if (rp.finish[active[i].reference] < rp.finish[active[first].reference]) first = i;
          now = rp.finish[active[first].reference];
          mirrored.finish(active[first].mirrored);
          plain.finish(active[first].plain);
          reference.finish(active[first].reference);
          active.erase(active.begin() + static_cast<std::ptrdiff_t>(first));
        }
        mirrored.resolve(now, mp.scheduler());
        plain.resolve(now, pp.scheduler());
        reference.resolve(now, rp.scheduler());
        for (const auto& ids : active) {
          INFO("step " << step);
          REQUIRE(mirrored.rate_Bps(ids.mirrored) == Approx(plain.rate_Bps(ids.plain)).epsilon(1e-13));
          REQUIRE(mp.finish[ids.mirrored] == Approx(pp.finish[ids.plain]).epsilon(1e-13));
          same = same && mirrored.rate_Bps(ids.mirrored) == plain.rate_Bps(ids.plain);
          REQUIRE(mirrored.rate_Bps(ids.mirrored) == Approx(reference.rate_Bps(ids.reference)).epsilon(1e-12));
          ++checked;
        }
      }
      CHECK(checked > 10000);
      // The component solver fills whole components, up and down links alike: bit for bit the same.
      // The local solver's region sums start from kept loads, and come out the same to rounding.
      if (solver == Solver::Components) CHECK(same);
      // The down links carry nothing in the mirrored network, and their entries in the plain one.
      double down_load = 0, plain_down_load = 0;
      for (const auto& [up, down] : m.pairs) {
        down_load += mirrored.load(down);
        plain_down_load += plain.load(down);
      }
      CHECK(down_load == 0);
      CHECK(plain_down_load > 0);
      CHECK(mirrored.counters().route_entries < plain.counters().route_entries);
    }
}

TEST_CASE("a route that crosses a mirrored pair unequally is a logic error", "[unit]") {
  const RingMachine m(4, 2, 1);
  FlowNetwork net(m.links, Solver::Local);
  net.set_mirrored(m.pairs);
  (void)net.add({0, 8, 3, 2, 9, 1}, 1e6, 1);                               // NIC 0 -> NIC 1 -> NIC 0: balanced
  CHECK_THROWS_AS(net.add({0, 8, 3}, 1e6, 2), std::logic_error);           // a one-way transfer
  CHECK_THROWS_AS(net.add({0, 8, 1, 0, 9, 3}, 1e6, 3), std::logic_error);  // NIC 0 up twice, NIC 1 down twice
  (void)net.add({4, 9, 5}, 1e6, 4);                                        // NIC 2 to itself: balanced
  CHECK(net.active_flows() == 2);
}

TEST_CASE("a held mirrored down link is taken with its bundle, not kept as load", "[unit]") {
  // Where routing reads every link (first_held() 0), a bundle's hops hold the down links too: the
  // flow takes those holds even though it leaves the links out, and their load goes with them.
  const RingMachine m(4, 2, 1);
  FlowNetwork net(m.links, Solver::Local);
  net.set_mirrored(m.pairs);
  const std::vector<topo::LinkId> hop1{0, 8, 3}, hop2{2, 9, 1};
  net.hold(hop1.data(), hop1.size());
  net.hold(hop2.data(), hop2.size());
  CHECK(net.load(1) == 1);
  const auto f = net.add({0, 8, 3, 2, 9, 1}, 1e6, 1);
  CHECK(net.load(1) == 0);  // left out, and its hold taken
  CHECK(net.load(3) == 0);
  CHECK(net.load(0) == 1);
  CHECK(net.load(8) == 1);
  CHECK_NOTHROW(net.add({4, 9, 5}, 1e6, 2));  // no holds pending: none taken
  Predictions p;
  net.resolve(0, p.scheduler());
  CHECK(net.rate_Bps(f) == Approx(12.5e9));  // NIC 0's 12.5 GB/s
  net.finish(f);
  CHECK(net.load(0) == 0);
}

TEST_CASE("mirrored pairs are refused where they cannot hold", "[unit]") {
  const RingMachine m(4, 2, 1);
  using Pairs = std::vector<std::pair<topo::LinkId, topo::LinkId>>;
  {
    FlowNetwork net(m.links, Solver::Reference);
    CHECK_THROWS_AS(net.set_mirrored(m.pairs), std::logic_error);  // the reference keeps every link
  }
  {
    FlowNetwork net(m.links, Solver::Local);
    CHECK_THROWS_AS(net.set_mirrored(Pairs{{1, 0}}), std::logic_error);   // down before up
    CHECK_THROWS_AS(net.set_mirrored(Pairs{{0, 8}}), std::logic_error);   // 12.5 and 25 GB/s
    CHECK_THROWS_AS(net.set_mirrored(Pairs{{0, 99}}), std::logic_error);  // no such link
  }
  {
    FlowNetwork net(m.links, Solver::Local);
    CHECK_THROWS_AS(net.set_mirrored(Pairs{{0, 1}, {0, 1}}), std::logic_error);  // a link in two pairs
  }
  {
    FlowNetwork net(m.links, Solver::Local);
    (void)net.add({8}, 1e6, 1);
    CHECK_THROWS_AS(net.set_mirrored(m.pairs), std::logic_error);  // after the first flow
  }
}
