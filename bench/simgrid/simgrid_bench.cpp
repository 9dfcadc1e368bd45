// simgrid_bench: iteration time and wall time of the fast flow core and of SimGrid on the same 4D plans,
// from 64 to 4,096 GPUs; one JSON line per case.
//
//   simgrid_bench            all cases (the 4,096-GPU ones take a few seconds of SimGrid each)
//   simgrid_bench --max-gpus 1024
//
// The two backends should agree within 1% up to 1,024 GPUs (held by simgrid_tests) and within 2% at
// 4,096. The machines and the plan are those of sim/simgrid/cross_check.hpp.

#include "sim/simgrid/cross_check.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace {

using exasim::sg::cross_check_dragonfly;
using exasim::sg::cross_check_single_switch;
using exasim::sg::CrossCheckCase;
using exasim::topo::RoutingPolicy;

std::vector<CrossCheckCase> cases() {
  auto df = [](std::uint32_t g, std::uint32_t s, std::uint32_t e, RoutingPolicy r, std::uint32_t parts = 1) {
    return [=] { return cross_check_dragonfly(g, s, e, r, parts); };
  };
  return {
      {"single switch", [] { return cross_check_single_switch(16); }, {2, 2, 2, 8}, true},
      {"single switch", [] { return cross_check_single_switch(16); }, {1, 4, 4, 4}, false},
      {"dragonfly minimal", df(4, 4, 4, RoutingPolicy::Minimal), {4, 2, 2, 8}, true},
      {"dragonfly Valiant", df(8, 4, 4, RoutingPolicy::Valiant), {2, 4, 4, 8}, true},
      {"dragonfly minimal", df(8, 8, 8, RoutingPolicy::Minimal), {4, 4, 2, 32}, true},
      {"dragonfly Valiant", df(8, 8, 8, RoutingPolicy::Valiant), {8, 2, 4, 16}, false},
      // Adaptive: both launch once per instant, so both route with the same loads (simgrid_runtime.hpp).
      {"dragonfly adaptive", df(8, 8, 8, RoutingPolicy::Adaptive), {4, 4, 2, 32}, true},
      {"dragonfly adaptive, 4 parts", df(8, 8, 8, RoutingPolicy::Adaptive, 4), {4, 4, 2, 32}, true},
      {"dragonfly adaptive, 4 parts", df(8, 8, 8, RoutingPolicy::Adaptive, 4), {4, 4, 2, 32}, false},
      {"dragonfly adaptive, 8 parts", df(8, 8, 8, RoutingPolicy::Adaptive, 8), {4, 4, 2, 32}, true},
      {"dragonfly minimal", df(16, 16, 8, RoutingPolicy::Minimal), {4, 4, 4, 64}, true},
      {"dragonfly Valiant", df(16, 16, 8, RoutingPolicy::Valiant), {8, 4, 2, 64}, false},
  };
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t max_gpus = 1u << 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--max-gpus") == 0 && i + 1 < argc) {
      max_gpus = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      std::cerr << "usage: simgrid_bench [--max-gpus N]\n";
      return 2;
    }
  }
  for (const auto& c : cases()) {
    if (c.grid.gpus() > max_gpus) continue;
    const auto r = exasim::sg::run_cross_check(c);
    nlohmann::ordered_json line;
    line["machine"] = c.machine;
    line["gpus"] = r.gpus;
    line["grid"] = {c.grid.gx, c.grid.gy, c.grid.gz, c.grid.gdata};
    line["overlap"] = c.overlap;
    line["fast_iteration_s"] = r.fast.iteration_s;
    line["simgrid_iteration_s"] = r.simgrid.iteration_s;
    line["difference_percent"] = r.difference_percent();
    line["fast_wall_s"] = r.fast.wall_s;
    line["simgrid_wall_s"] = r.simgrid.wall_s;
    line["flows"] = r.fast.flows;
    std::cout << line.dump() << std::endl;
  }
  return 0;
}
