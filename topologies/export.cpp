// export_topology (declared in summary.hpp): the topology graph through Boost.Graph's writers.
//
// Vertices: every GPU, NIC and switch, and each node's NVSwitch fabric where it has one. Edges: every
// directed link (with its id, class, bandwidth and latency), plus one "attachment" edge from each GPU to
// the NIC it sends through and back: they are not links (a GPU reaches its NIC for free, node.hpp), so
// they carry link -1 and bandwidth 0, but without them the exported graph would not show which GPU uses
// which NIC.

// GCC 12 reports -Wmaybe-uninitialized inside Boost's adjacency-list edge iterator (a boost::optional it
// fills before use) when the writers below instantiate it: a false positive in Boost's code, not ours.
// Off for this whole file because the warning is reported where the templates are instantiated.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphml.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_map/dynamic_property_map.hpp>
#include <boost/property_map/function_property_map.hpp>

#include <charconv>
#include <ostream>
#include <stdexcept>
#include <string>

#include "topologies/summary.hpp"

namespace exasim::topo {

namespace {

struct VertexProps {
  std::string name;
  std::string kind;
  long long node = -1;   ///< -1 for switches
  long long group = -1;  ///< -1 for switches
};

struct EdgeProps {
  long long link = -1;  ///< -1: attachment, not a link
  std::string cls;
  double bandwidth_Bps = 0;
  double latency_s = 0;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexProps, EdgeProps>;

/// Vertex numbering: GPUs, then NICs, then switches, then the nodes' NVSwitch fabrics.
struct Numbering {
  std::uint32_t gpus, nics, switches;
  [[nodiscard]] std::size_t operator()(const Vertex& v) const {
    switch (v.kind) {
      case VertexKind::Gpu: return v.index;
      case VertexKind::Nic: return std::size_t{gpus} + v.index;
      case VertexKind::Switch: return std::size_t{gpus} + nics + v.index;
      case VertexKind::NodeSwitch: return std::size_t{gpus} + nics + switches + v.index;
    }
    return 0;
  }
};

/// Calls vertex(Vertex, node, group) for every vertex and edge(LinkId or -1, LinkEnds) for every edge,
/// in id order: the one walk all three formats share.
template <class OnVertex, class OnEdge>
void walk(const Topology& t, OnVertex on_vertex, OnEdge on_edge) {
  const std::uint32_t nodes = t.node_count(), gpn = t.gpus_per_node(), npn = t.nics_per_node();
  for (GpuId g = 0; g < t.gpu_count(); ++g) on_vertex(Vertex{VertexKind::Gpu, g}, g / gpn, t.group_of_node(g / gpn));
  for (std::uint32_t n = 0; n < nodes * npn; ++n) {
    on_vertex(Vertex{VertexKind::Nic, n}, n / npn, t.group_of_node(n / npn));
  }
  for (std::uint32_t s = 0; s < t.switch_count(); ++s) on_vertex(Vertex{VertexKind::Switch, s}, -1, -1);
  for (std::uint32_t n = 0; n < t.node_switch_count(); ++n) {
    on_vertex(Vertex{VertexKind::NodeSwitch, n}, n, t.group_of_node(n));
  }
  for (LinkId l = 0; l < t.links().size(); ++l) on_edge(static_cast<long long>(l), t.link_ends(l));
  for (GpuId g = 0; g < t.gpu_count(); ++g) {
    const Vertex gpu{VertexKind::Gpu, g};
    const Vertex nic{VertexKind::Nic, (g / gpn) * npn + (g % gpn) * npn / gpn};  // nic_of_local_gpu (node.hpp)
    on_edge(-1, LinkEnds{gpu, nic});
    on_edge(-1, LinkEnds{nic, gpu});
  }
}

Graph make_graph(const Topology& t) {
  const Numbering number{t.gpu_count(), t.node_count() * t.nics_per_node(), t.switch_count()};
  Graph g(std::size_t{number.gpus} + number.nics + number.switches + t.node_switch_count());
  walk(
      t,
      [&](const Vertex& v, long long node, long long group) {
        g[number(v)] = VertexProps{vertex_name(v), std::string(to_string(v.kind)), node, group};
      },
      [&](long long link, const LinkEnds& e) {
        EdgeProps p;
        p.link = link;
        if (link >= 0) {
          const Link& l = t.links()[static_cast<LinkId>(link)];
          p.cls = std::string(to_string(l.cls));
          p.bandwidth_Bps = l.bandwidth_Bps;
          p.latency_s = l.latency_s;
        } else {
          p.cls = "attachment";
        }
        boost::add_edge(number(e.from), number(e.to), std::move(p), g);
      });
  return g;
}

boost::dynamic_properties properties(Graph& g) {
  boost::dynamic_properties dp;
  dp.property("name", boost::get(&VertexProps::name, g));
  dp.property("kind", boost::get(&VertexProps::kind, g));
  dp.property("node", boost::get(&VertexProps::node, g));
  dp.property("group", boost::get(&VertexProps::group, g));
  dp.property("link", boost::get(&EdgeProps::link, g));
  dp.property("class", boost::get(&EdgeProps::cls, g));
  dp.property("bandwidth_Bps", boost::get(&EdgeProps::bandwidth_Bps, g));
  dp.property("latency_s", boost::get(&EdgeProps::latency_s, g));
  return dp;
}

/// Shortest round-trip text of a double: deterministic and compact.
void put(std::ostream& out, double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.write(buf, r.ptr - buf);
}

// write_graphviz_dp quotes every id and attribute through escape_dot_string, which runs a regex per
// string: ~8 s for Frontier. Ids here are already valid unquoted Graphviz ids (gpu12, sw3), so the dot
// writer gets them as DotId, whose escape_dot_string overload (found by argument-dependent lookup, and
// preferred to Boost's template) passes them through; attributes are written by our own writers.
struct DotId {
  const std::string* name;
};
[[maybe_unused]] std::string escape_dot_string(const DotId& id) { return *id.name; }

void write_dot(const Graph& g, std::ostream& out) {
  const auto vertex_writer = [&g](std::ostream& o, Graph::vertex_descriptor v) {
    const VertexProps& p = g[v];
    o << " [kind=\"" << p.kind << '"';
    if (p.node >= 0) o << ", node=" << p.node << ", group=" << p.group;
    o << ']';
  };
  const auto edge_writer = [&g](std::ostream& o, Graph::edge_descriptor e) {
    const EdgeProps& p = g[e];
    o << "[link=\"" << p.link << "\", class=\"" << p.cls << "\", bandwidth_Bps=\"";
    put(o, p.bandwidth_Bps);
    o << "\", latency_s=\"";
    put(o, p.latency_s);
    o << "\"]";
  };
  const auto graph_writer = [](std::ostream&) {};
  const auto ids = boost::make_function_property_map<Graph::vertex_descriptor>(
      [&g](Graph::vertex_descriptor v) { return DotId{&g[v].name}; });
  boost::write_graphviz(out, g, vertex_writer, edge_writer, graph_writer, ids);
}

// JSON has no Boost writer; it is streamed so that Frontier's ~400k edges never sit in a JSON DOM.
void write_json(const Topology& t, std::ostream& out) {
  out << "{\"summary\":" << to_json(t.summary()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
      << ",\n\"vertices\":[";
  bool first = true, in_edges = false;
  const auto sep = [&] {
    out << (first ? "\n" : ",\n");
    first = false;
  };
  walk(
      t,
      [&](const Vertex& v, long long node, long long group) {
        sep();
        out << "{\"id\":\"" << vertex_name(v) << "\",\"kind\":\"" << to_string(v.kind) << '"';
        if (node >= 0) out << ",\"node\":" << node << ",\"group\":" << group;
        out << '}';
      },
      [&](long long link, const LinkEnds& e) {
        if (!in_edges) {
          out << "\n],\n\"edges\":[";
          first = true;
          in_edges = true;
        }
        sep();
        out << "{\"link\":" << link << ",\"from\":\"" << vertex_name(e.from) << "\",\"to\":\"" << vertex_name(e.to)
            << "\",\"class\":\"";
        if (link >= 0) {
          const Link& l = t.links()[static_cast<LinkId>(link)];
          out << to_string(l.cls) << "\",\"bandwidth_Bps\":";
          put(out, l.bandwidth_Bps);
          out << ",\"latency_s\":";
          put(out, l.latency_s);
        } else {
          out << "attachment\",\"bandwidth_Bps\":0,\"latency_s\":0";
        }
        out << '}';
      });
  out << "\n]}\n";
}

}  // namespace

void export_topology(const Topology& t, std::string_view format, std::ostream& out) {
  if (format == "json") {
    write_json(t, out);
    return;
  }
  if (format != "graphml" && format != "dot") {
    throw std::invalid_argument("export_topology: unknown format '" + std::string(format) +
                                "' (allowed: graphml, dot, json)");
  }
  Graph g = make_graph(t);
  const boost::dynamic_properties dp = properties(g);
  if (format == "graphml") {
    boost::write_graphml(out, g, boost::get(boost::vertex_index, g), dp, /*ordered_vertices=*/true);
  } else {
    write_dot(g, out);
  }
}

}  // namespace exasim::topo
