#include "topologies/summary.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <streambuf>

#include "topologies/dragonfly.hpp"
#include "topologies/fat_tree.hpp"
#include "topologies/single_switch.hpp"

using namespace exasim::topo;

namespace {

/// Counts what is written and keeps nothing: Frontier's exports are tens of MB.
class CountingBuf final : public std::streambuf {
 public:
  std::size_t bytes = 0;

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) ++bytes;
    return c;
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::size_t>(n);
    return n;
  }
};

DragonflyParams tiny_dragonfly() {
  DragonflyParams p;
  p.node = {2, 100e9, 1e-6, 2, 25e9, 2e-6};
  p.groups = 3;
  p.switches_per_group = 2;
  p.endpoints_per_switch = 2;
  p.local_bandwidth_Bps = 25e9;
  p.global_bandwidth_Bps = 25e9;
  return p;
}

}  // namespace

TEST_CASE("export: json lists every vertex and link", "[unit]") {
  const Dragonfly d(tiny_dragonfly());
  std::ostringstream out;
  export_topology(d, "json", out);
  const auto j = nlohmann::json::parse(out.str());
  CHECK(j["summary"]["topology"] == "dragonfly");
  CHECK(j["summary"]["nodes"] == 6);
  CHECK(j["vertices"].size() == 12 + 12 + 6);             // GPUs, NICs, switches
  CHECK(j["edges"].size() == d.links().size() + 2 * 12);  // links + GPU<->NIC attachments
  CHECK(j["vertices"][0] == nlohmann::json::parse(R"({"id": "gpu0", "kind": "gpu", "node": 0, "group": 0})"));
  const auto& e = j["edges"][0];
  CHECK(e["link"] == 0);
  CHECK(e["from"] == "gpu0");
  CHECK(e["to"] == "gpu1");
  CHECK(e["class"] == "gpu-gpu");
  CHECK(e["bandwidth_Bps"] == 100e9);
  // Every link's ends, as exported, are what link_ends() says.
  for (LinkId l = 0; l < d.links().size(); ++l) {
    const auto& edge = j["edges"][l];
    CHECK(edge["from"] == vertex_name(d.link_ends(l).from));
    CHECK(edge["to"] == vertex_name(d.link_ends(l).to));
  }
}

TEST_CASE("export: graphml and dot through Boost.Graph", "[unit]") {
  SingleSwitchParams p;
  p.node = {2, 100e9, 1e-6, 1, 25e9, 1e-6};
  p.nodes = 2;
  const SingleSwitch s(p);
  std::ostringstream graphml, dot;
  export_topology(s, "graphml", graphml);
  export_topology(s, "dot", dot);
  CHECK(graphml.str().find("<graphml") != std::string::npos);
  CHECK(graphml.str().find("attr.name=\"bandwidth_Bps\"") != std::string::npos);
  CHECK(graphml.str().find("nic-up") != std::string::npos);
  CHECK(dot.str().find("digraph") != std::string::npos);
  CHECK(dot.str().find("nic0->sw0 [link=\"2\", class=\"nic-up\"") != std::string::npos);
  std::ostringstream again;
  export_topology(s, "dot", again);
  CHECK(again.str() == dot.str());  // deterministic
  CHECK_THROWS_AS(export_topology(s, "svg", again), std::invalid_argument);

  FatTreeParams f;
  f.node = p.node;
  f.leaves_per_pod = 2;
  f.spines_per_pod = 2;
  f.endpoints_per_leaf = 2;
  f.leaf_spine_bandwidth_Bps = 25e9;
  std::ostringstream tree;
  export_topology(FatTree(f), "json", tree);
  CHECK(nlohmann::json::parse(tree.str())["vertices"].size() == 8 + 4 + 4);
}

// Every link of a Frontier-sized dragonfly in each format. How long it takes is not checked here (unit
// tests hold no wall-clock limits: under the sanitizers on a slow host graphml took 12 s).
TEST_CASE("export: a Frontier-sized dragonfly exports every link in each format", "[integration]") {
  DragonflyParams p;
  p.node = {8, 0, 1e-6, 4, 25e9, 1e-6, GpuLinkLayout::FrontierMi250x};
  p.groups = 74;
  p.switches_per_group = 32;
  p.endpoints_per_switch = 16;
  p.global_links_per_group_pair = 4;
  p.local_bandwidth_Bps = 25e9;
  p.global_bandwidth_Bps = 25e9;
  const Dragonfly d(p);
  for (const char* format : {"json", "graphml", "dot"}) {
    CountingBuf buf;
    std::ostream out(&buf);
    export_topology(d, format, out);
    INFO(format);
    CHECK(buf.bytes > d.links().size() * 40);
  }
}
