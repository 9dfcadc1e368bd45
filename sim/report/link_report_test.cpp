#include "sim/report/link_report.hpp"

#include "topologies/dragonfly.hpp"
#include "topologies/test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>

using namespace exasim;

namespace {

// 3 groups of 4 switches, nodes of 4 GPUs with 2 NICs, 1 global link per group pair.
topo::Dragonfly three_groups() {
  return topo::Dragonfly(topo::testing::small_dragonfly_params(3, 4, 1, 1, 10e9, topo::RoutingPolicy::Minimal));
}

}  // namespace

TEST_CASE("link report: classes, the hottest links with their ends, and group traffic", "[unit]") {
  const auto d = three_groups();
  runtime::RunResult run;
  run.iteration_s = 2.0;
  run.link_bytes.assign(d.links().size(), 0.0);
  run.link_busy_s.assign(d.links().size(), 0.0);
  const topo::LinkId g01 = d.global_link(0, 1, 0), g21 = d.global_link(2, 1, 0), up = d.nic_link(0, 0, true);
  run.link_bytes[g01] = 10e9;  // half of what 10 GB/s carries in 2 s
  run.link_busy_s[g01] = 1.5;
  run.link_bytes[g21] = 4e9;
  run.link_busy_s[g21] = 1.0;
  run.link_bytes[up] = 10e9;  // a fifth of 25 GB/s x 2 s
  run.link_busy_s[up] = 0.5;

  const auto report = report::link_report(d, run, 2);
  REQUIRE(report.hottest.size() == 2);
  CHECK(report.hottest[0].link == g01);
  CHECK(report.hottest[0].utilisation == Approx(0.5));
  CHECK(report.hottest[0].link_class == "global");
  CHECK(report.hottest[0].from.find("(group 0)") != std::string::npos);
  CHECK(report.hottest[0].to.find("(group 1)") != std::string::npos);
  // g21 and the NIC link both run at 20 %: the tie goes to the one with more bytes, the NIC link.
  CHECK(report.hottest[1].link == up);
  CHECK(report.hottest[1].utilisation == Approx(0.2));
  bool saw_global = false;
  for (const auto& c : report.classes) {
    if (c.link_class != "global") continue;
    saw_global = true;
    CHECK(c.links == d.link_count(topo::LinkClass::Global));
    CHECK(c.used == 2);
    CHECK(c.bytes == Approx(14e9));
    CHECK(c.mean_busy_s == Approx(1.25));
    CHECK(c.max_utilisation == Approx(0.5));
  }
  CHECK(saw_global);
  REQUIRE(report.groups == 3);
  CHECK(report.group_bytes[0][1] == Approx(10e9));
  CHECK(report.group_bytes[2][1] == Approx(4e9));
  CHECK(report.group_bytes[1][0] == 0);

  std::ostringstream csv;
  report::write_links_csv(csv, d, run);
  const std::string text = csv.str();
  CHECK(text.rfind("link,class,from,to,bytes,busy_s,utilisation\n", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 4);  // the header and the three links that carried bytes
  CHECK(text.find(std::to_string(g01) + ",global,switch") != std::string::npos);

  runtime::RunResult unmetered;
  CHECK_THROWS_AS(report::link_report(d, unmetered, 5), std::invalid_argument);
}
