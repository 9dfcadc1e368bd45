#include "validate/internal/calibration_fit.hpp"

#include "sim/schedule/plan.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace exasim::validate {

namespace {

/// Weighted least squares for t = a*x + b*y (x = steps, y = bytes), weights 1/t^2.
std::pair<double, double> solve(const std::vector<FitPoint>& pts, bool with_latency) {
  double sxx = 0, sxy = 0, syy = 0, sxt = 0, syt = 0;
  for (const auto& p : pts) {
    const double w = 1.0 / (p.time_s * p.time_s);
    sxx += w * p.steps * p.steps;
    sxy += w * p.steps * p.bytes;
    syy += w * p.bytes * p.bytes;
    sxt += w * p.steps * p.time_s;
    syt += w * p.bytes * p.time_s;
  }
  if (!with_latency) return {0.0, syy > 0 ? syt / syy : 0.0};
  const double det = sxx * syy - sxy * sxy;
  if (std::abs(det) < 1e-300 * std::max(1.0, sxx * syy)) return {0.0, syy > 0 ? syt / syy : 0.0};
  return {(sxt * syy - syt * sxy) / det, (sxx * syt - sxy * sxt) / det};
}

/// rms of (steps * latency + bytes * inverse_bw - t) / t over the points.
double rms_relative_error(const std::vector<FitPoint>& pts, double latency_s, double inverse_bw) {
  double sum = 0;
  for (const auto& p : pts) {
    const double r = (p.steps * latency_s + p.bytes * inverse_bw - p.time_s) / p.time_s;
    sum += r * r;
  }
  return std::sqrt(sum / static_cast<double>(pts.size()));
}

}  // namespace

LinearFit fit_latency_bandwidth(const std::vector<FitPoint>& pts) {
  if (pts.size() < 2) throw std::invalid_argument("fit_latency_bandwidth: need at least 2 points");
  for (const auto& p : pts)
    if (!(p.time_s > 0)) throw std::invalid_argument("fit_latency_bandwidth: times must be positive");
  auto [latency, inverse_bw] = solve(pts, true);
  // A negative latency, or times that fall as bytes grow (a loaded host: the small points measured while
  // busy, the large ones after): bandwidth alone, through the origin, which any positive points give.
  if (latency < 0 || !(inverse_bw > 0)) {
    latency = 0;
    inverse_bw = solve(pts, false).second;
  }
  if (!(inverse_bw > 0)) throw std::invalid_argument("fit_latency_bandwidth: no positive bandwidth fits the points");
  LinearFit fit;
  fit.latency_s = latency;
  fit.bandwidth_Bps = 1.0 / inverse_bw;
  fit.points = pts.size();
  fit.rms_relative_error = rms_relative_error(pts, latency, inverse_bw);
  return fit;
}

LinearFit fit_latency_given_bandwidth(const std::vector<FitPoint>& pts, double bandwidth_Bps) {
  if (pts.empty()) throw std::invalid_argument("fit_latency_given_bandwidth: no points");
  if (!(bandwidth_Bps > 0)) throw std::invalid_argument("fit_latency_given_bandwidth: bandwidth must be positive");
  double sxx = 0, sxr = 0;  // weights 1/t^2 on t - bytes/B = steps * latency
  for (const auto& p : pts) {
    if (!(p.time_s > 0)) throw std::invalid_argument("fit_latency_given_bandwidth: times must be positive");
    const double w = 1.0 / (p.time_s * p.time_s);
    sxx += w * p.steps * p.steps;
    sxr += w * p.steps * (p.time_s - p.bytes / bandwidth_Bps);
  }
  LinearFit fit;
  fit.latency_s = sxx > 0 ? std::max(0.0, sxr / sxx) : 0.0;
  fit.bandwidth_Bps = bandwidth_Bps;
  fit.points = pts.size();
  fit.rms_relative_error = rms_relative_error(pts, fit.latency_s, 1 / bandwidth_Bps);
  return fit;
}

namespace {

/// Fits one kind's points of one band; keeps `machine`'s bandwidth when the band's own is implausible.
LinearFit fit_band(const std::vector<FitPoint>& pts, const LinearFit& machine) {
  try {
    LinearFit own = fit_latency_bandwidth(pts);
    const double ratio = own.bandwidth_Bps / machine.bandwidth_Bps;
    if (ratio >= 0.05 && ratio <= 20) return own;
  } catch (const std::invalid_argument&) {
    // fewer than two points, or no positive bandwidth: fall through to the latency-only fit
  }
  return fit_latency_given_bandwidth(pts, machine.bandwidth_Bps);
}

/// A ring collective's point with what banding needs: its kind, its group size and its full buffer S.
struct KindPoint {
  std::string kind;
  std::uint32_t members = 0;
  double buffer_bytes = 0;
  FitPoint point;
};

/// Per kind and size band over every group size (members 0), then per kind, band and group size; the rms
/// error of every point under its band's fit, for each of the two.
void fit_kinds(const std::vector<KindPoint>& points, HostCalibration& h) {
  std::set<std::uint32_t> sizes;
  for (const auto& k : points) sizes.insert(k.members);
  std::vector<std::uint32_t> row_sizes = {0};
  if (sizes.size() > 1) row_sizes.insert(row_sizes.end(), sizes.begin(), sizes.end());
  double sized_sum = 0;  // over the rows of every group size, which hold every point once
  std::size_t sized_n = 0;
  for (const std::uint32_t members : row_sizes) {
    double sum = 0;
    std::size_t n = 0;
    for (const char* kind : {"all_reduce", "all_gather", "reduce_scatter"}) {
      for (const bool small : {true, false}) {
        std::vector<FitPoint> band;
        for (const auto& k : points)
          if (k.kind == kind && (members == 0 || k.members == members) && (k.buffer_bytes <= kSmallBandBytes) == small)
            band.push_back(k.point);
        if (band.empty()) continue;
        KindBandFit f;
        f.kind = kind;
        f.members = members;
        if (small) f.up_to_bytes = kSmallBandBytes;
        f.fit = fit_band(band, h.collectives);
        sum += f.fit.rms_relative_error * f.fit.rms_relative_error * static_cast<double>(band.size());
        n += band.size();
        h.kinds.push_back(f);
      }
    }
    if (members == 0) {
      h.kinds_rms_relative_error = n > 0 ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
    } else {
      sized_sum += sum;
      sized_n += n;
    }
  }
  h.sized_rms_relative_error =
      sized_n > 0 ? std::sqrt(sized_sum / static_cast<double>(sized_n)) : h.kinds_rms_relative_error;
}

}  // namespace

HostCalibration fit_host(const emu::Microbench& bench) {
  std::vector<FitPoint> pingpong, busy;
  std::vector<KindPoint> by_kind;
  std::vector<double> kernel_excess;
  HostCalibration h;
  double largest_single = 0, largest_all = 0;
  for (const auto& s : bench.samples) {
    if (s.kind == "kernel") {
      kernel_excess.push_back(s.time_s - s.op_s);
    } else if (s.kind == "pingpong") {
      pingpong.push_back({1, s.bytes, s.time_s});
    } else if (s.kind == "exchange") {
      // Information only, not fitted: one large copy per rank, whose time on an oversubscribed host
      // depends on whether the pairs' copies share a core (2-3x apart between calibrations on a 2-core
      // host, where the ring points agree within 10%).
      if (s.groups * 2 == bench.ranks) {
        if (s.bytes >= largest_all) {
          largest_all = s.bytes;
          h.exchange_aggregate_Bps = s.bytes * bench.ranks / s.time_s;
        }
      }
      if (s.groups == 1 && s.bytes >= largest_single) {
        largest_single = s.bytes;
        h.single_pair_Bps = s.bytes / s.time_s;
      }
    } else if (s.group * s.groups == bench.ranks) {
      const auto kind = schedule::coll_kind_of(s.kind);
      if (!kind) throw std::invalid_argument("fit_host: a sample of unknown kind " + s.kind);
      busy.push_back({static_cast<double>(schedule::ring_steps(*kind, s.group)),
                      schedule::ring_wire_bytes(*kind, s.group, s.bytes), s.time_s});
      by_kind.push_back({s.kind, s.group, s.bytes, busy.back()});
    }
  }
  h.pingpong = fit_latency_bandwidth(pingpong);
  h.collectives = fit_latency_bandwidth(busy);
  fit_kinds(by_kind, h);
  if (!kernel_excess.empty()) {
    // The median over the op durations: one late point (a wake-up behind another rank) does not set it.
    std::sort(kernel_excess.begin(), kernel_excess.end());
    h.kernel_overhead_s = std::max(0.0, kernel_excess[(kernel_excess.size() - 1) / 2]);
    h.kernel_points = kernel_excess.size();
  }
  return h;
}

namespace {

nlohmann::ordered_json step_cost_rows(const HostCalibration& h, double nic_latency) {
  auto rows = nlohmann::ordered_json::array();
  for (const KindBandFit& k : h.kinds) {
    nlohmann::ordered_json row = {{"kind", k.kind}};
    if (std::isfinite(k.up_to_bytes)) row["up_to_bytes"] = k.up_to_bytes;
    if (k.members != 0) row["members"] = k.members;
    row["step_overhead_s"] = std::max(0.0, k.fit.latency_s - 2 * nic_latency);
    row["bandwidth_scale"] = k.fit.bandwidth_Bps / h.collectives.bandwidth_Bps;
    row["sources"] = {{"points", k.fit.points}, {"rms_error_pct", std::round(k.fit.rms_relative_error * 1000) / 10}};
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

nlohmann::ordered_json machine_json(const HostCalibration& h, const emu::Microbench& bench) {
  using json = nlohmann::ordered_json;
  // Each ring step pays NIC-up + NIC-down latency plus the step overhead; the p2p latency sets the
  // NIC part (at most the fitted step), the rest is software overhead of a collective step.
  const double step = h.collectives.latency_s;
  const double nic_latency = std::min(h.pingpong.latency_s, step) / 2;
  const double overhead = std::max(0.0, step - 2 * nic_latency);
  auto pct = [](double rel) { return std::round(rel * 1000) / 10; };
  return json{
      {"name", "calibrated-" + bench.host + "-" + std::to_string(bench.ranks) + "ranks"},
      {"description",
       "This host as measured by exasim calibrate: one rank per node, each rank's NIC its share of"
       " the host's copy bandwidth with every rank busy. The gpu section is a placeholder:"
       " validation keeps the scenario's GPU."},
      {"gpu", "a100-40gb"},
      {"node",
       {{"gpus", 1},
        {"gpu_gpu_bandwidth_Bps", h.pingpong.bandwidth_Bps},
        {"gpu_gpu_latency_s", h.pingpong.latency_s},
        {"nics", 1},
        {"nic_bandwidth_Bps", h.collectives.bandwidth_Bps},
        {"nic_latency_s", nic_latency},
        {"sources",
         {{"gpu_gpu_bandwidth_Bps", "ping-pong fit, ranks 0-1 on an idle host (information only: one GPU per node)"},
          {"nic_bandwidth_Bps", "fit of " + std::to_string(h.collectives.points) +
                                    " ring collective points with every rank busy; rms error " +
                                    std::to_string(pct(h.collectives.rms_relative_error)) + "%"},
          {"nic_latency_s", "half the ping-pong latency (at most half the fitted ring-step latency)"}}}}},
      {"network",
       {{"topology", "single_switch"},
        {"switch_latency_s", 0.0},
        {"max_nodes", bench.ranks},
        {"sources", {{"max_nodes", "one node per rank of this host"}}}}},
      {"collectives",
       {{"step_overhead_s", overhead},
        {"step_costs", step_cost_rows(h, nic_latency)},
        {"group_order", "concurrent"},
        {"sources",
         {{"step_overhead_s", "fitted ring-step latency minus the two NIC latencies"},
          {"group_order",
           "the emulator posts every collective to MPI at once, whose progress runs a group's outstanding "
           "collectives beside each other"},
          {"step_costs",
           "the same ring points fitted per kind and size band, then per kind, band and group size "
           "(members); latency minus the two NIC latencies, bandwidth as a share of the NIC's"}}}}},
      {"sources",
       {{"host", bench.host},
        {"ranks", bench.ranks},
        {"poll_interval_s", bench.poll_interval_s},
        {"pingpong_rms_error_pct", pct(h.pingpong.rms_relative_error)},
        {"collectives_rms_error_pct", pct(h.collectives.rms_relative_error)},
        {"step_costs_rms_error_pct", pct(h.kinds_rms_relative_error)},
        {"step_costs_by_group_size_rms_error_pct", pct(h.sized_rms_relative_error)},
        {"emulated_kernel_overhead_s", h.kernel_overhead_s},
        {"emulated_kernel_points", h.kernel_points},
        {"exchange_aggregate_Bps", h.exchange_aggregate_Bps},
        {"single_pair_exchange_Bps", h.single_pair_Bps}}},
  };
}

nlohmann::json machine_with_node_size(const nlohmann::json& machine, std::uint32_t gpus_per_node) {
  if (gpus_per_node <= 1) return machine;
  nlohmann::json reshaped = machine;
  const auto& node = machine.at("node");
  const double bandwidth = node.at("nic_bandwidth_Bps").get<double>();
  const double nic_latency = node.at("nic_latency_s").get<double>();
  const double switch_latency = machine.at("network").value("switch_latency_s", 0.0);
  const std::string why =
      "this host has no nodes: every GPU gets a rank's calibrated share, inside a node as between nodes";
  reshaped["node"] = {
      {"gpus", gpus_per_node},
      {"gpu_links", "nvswitch"},
      {"gpu_switch_bandwidth_Bps", bandwidth},
      {"gpu_gpu_latency_s", 2 * nic_latency + switch_latency},
      {"nics", gpus_per_node},
      {"nic_bandwidth_Bps", bandwidth},
      {"nic_latency_s", nic_latency},
      {"sources",
       {{"gpus", "the scenario's GPUs per node (exasim validate), so that groups span nodes as when emulated"},
        {"gpu_switch_bandwidth_Bps", why},
        {"gpu_gpu_latency_s", "the latency of a NIC-to-NIC route of this machine: " + why},
        {"nic_bandwidth_Bps", node.contains("sources") ? node["sources"].value("nic_bandwidth_Bps", why) : why},
        {"nic_latency_s", node.contains("sources") ? node["sources"].value("nic_latency_s", why) : why}}}};
  return reshaped;
}

}  // namespace exasim::validate
