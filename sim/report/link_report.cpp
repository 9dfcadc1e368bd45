#include "sim/report/link_report.hpp"

#include "sim/report/csv_table.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <stdexcept>

namespace exasim::report {

namespace {

std::string describe(const topo::Topology& topology, topo::Vertex v) {
  std::string text = std::string(topo::to_string(v.kind)) + " " + std::to_string(v.index);
  if (v.kind == topo::VertexKind::Switch && topology.group_count() > 1)
    text += " (group " + std::to_string(topology.group_of_switch(v.index)) + ")";
  return text;
}

double utilisation(const topo::Topology& topology, topo::LinkId l, double bytes, double iteration_s) {
  const double capacity = topology.links()[l].bandwidth_Bps * iteration_s;
  return capacity > 0 ? bytes / capacity : 0;
}

void check_metered(const topo::Topology& topology, const runtime::RunResult& result) {
  if (result.link_bytes.size() != topology.links().size() || result.link_busy_s.size() != topology.links().size())
    throw std::invalid_argument("link_report: the run was not metered (meter_links)");
}

}  // namespace

LinkReport link_report(const topo::Topology& topology, const runtime::RunResult& result, std::size_t top,
                       const std::vector<std::pair<std::size_t, std::string>>& all_to_all_dims) {
  check_metered(topology, result);
  const auto& links = topology.links();
  const double T = result.iteration_s;
  LinkReport report;
  std::vector<LinkClassLoad> classes(topo::kLinkClassCount);
  std::vector<LinkLoad> used;
  report.groups = topology.group_count();
  if (report.groups > 1) report.group_bytes.assign(report.groups, std::vector<double>(report.groups, 0.0));
  for (topo::LinkId l = 0; l < links.size(); ++l) {
    LinkClassLoad& c = classes[static_cast<std::size_t>(links[l].cls)];
    ++c.links;
    const double bytes = result.link_bytes[l];
    if (bytes <= 0) continue;
    const double u = utilisation(topology, l, bytes, T);
    ++c.used;
    c.bytes += bytes;
    c.mean_busy_s += result.link_busy_s[l];
    c.mean_utilisation += u;
    c.max_utilisation = std::max(c.max_utilisation, u);
    used.push_back({l, "", "", "", bytes, result.link_busy_s[l], u});
    if (report.groups > 1 && links[l].cls == topo::LinkClass::Global) {
      const auto ends = topology.link_ends(l);
      report.group_bytes[topology.group_of_switch(ends.from.index)][topology.group_of_switch(ends.to.index)] += bytes;
    }
  }
  for (std::size_t k = 0; k < classes.size(); ++k) {
    LinkClassLoad& c = classes[k];
    if (c.links == 0) continue;
    c.link_class = std::string(topo::to_string(static_cast<topo::LinkClass>(k)));
    if (c.used > 0) {
      c.mean_busy_s /= static_cast<double>(c.used);
      c.mean_utilisation /= static_cast<double>(c.used);
    }
    report.classes.push_back(c);
  }
  const std::size_t n = std::min(top, used.size());
  std::partial_sort(used.begin(), used.begin() + static_cast<std::ptrdiff_t>(n), used.end(),
                    [](const LinkLoad& a, const LinkLoad& b) {
                      if (a.utilisation != b.utilisation) return a.utilisation > b.utilisation;
                      if (a.bytes != b.bytes) return a.bytes > b.bytes;
                      return a.link < b.link;
                    });
  used.resize(n);
  for (LinkLoad& h : used) {
    const auto ends = topology.link_ends(h.link);
    h.link_class = std::string(topo::to_string(links[h.link].cls));
    h.from = describe(topology, ends.from);
    h.to = describe(topology, ends.to);
  }
  report.hottest = std::move(used);
  if (report.groups > 1) {
    for (const auto& [dim, name] : all_to_all_dims) {
      auto& out = report.all_to_all_group_bytes.emplace_back();
      out.dim = name;
      out.bytes.assign(report.groups, std::vector<double>(report.groups, 0.0));
      if (dim >= result.link_bytes_by_dim.size() || result.link_bytes_by_dim[dim].empty()) continue;
      const auto& bytes = result.link_bytes_by_dim[dim];
      for (topo::LinkId l = 0; l < links.size(); ++l) {
        if (links[l].cls != topo::LinkClass::Global || bytes[l] <= 0) continue;
        const auto ends = topology.link_ends(l);
        out.bytes[topology.group_of_switch(ends.from.index)][topology.group_of_switch(ends.to.index)] += bytes[l];
      }
    }
  }
  return report;
}

void write_links_csv(std::ostream& out, const topo::Topology& topology, const runtime::RunResult& result) {
  check_metered(topology, result);
  out << "link,class,from,to,bytes,busy_s,utilisation\n";
  char line[128];
  for (topo::LinkId l = 0; l < topology.links().size(); ++l) {
    const double bytes = result.link_bytes[l];
    if (bytes <= 0) continue;
    const auto ends = topology.link_ends(l);
    std::snprintf(line, sizeof line, ",%.17g,%.17g,%.17g\n", bytes, result.link_busy_s[l],
                  utilisation(topology, l, bytes, result.iteration_s));
    out << csv_line({std::to_string(l), std::string(topo::to_string(topology.links()[l].cls)),
                     describe(topology, ends.from), describe(topology, ends.to)})
        << line;
  }
}

}  // namespace exasim::report
