// `exasim place SCENARIO`: where to put the ranks of a job on the machine. The search
// (sim/place) scores node orders x grid dimension orders analytically; the baselines (packed or the
// scheduler's order, spread, random 1-3) and the best --top K candidates are simulated in full (batch.hpp,
// over --jobs processes or --ranks MPI ranks), ranked by simulated iteration time; the fastest is the plan,
// simulated once more with its links metered. With layer sampling (simulation.sample_layers) every
// simulation is sampled and the plan's links go unmetered (a sampled run has no link loads of the
// iteration). docs/place.md.

#include "sim/api/layer_sampling.hpp"
#include "sim/api/simulate.hpp"
#include "sim/cli/batch.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/place_network.hpp"
#include "sim/cli/place_run.hpp"
#include "sim/cli/simulate.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_files.hpp"
#include "sim/place/place.hpp"
#include "sim/report/csv_table.hpp"
#include "sim/report/summary_views.hpp"
#include "sim/scenario/machine.hpp"
#include "sim/tune/search.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <tuple>

namespace exasim::cli {

namespace {

namespace fs = std::filesystem;

/// A placement simulated in full.
struct Placed {
  std::string label;  ///< baseline name, or "ORDER / dims D"
  bool baseline = false;
  double analytic_s = 0;
  std::vector<std::uint32_t> gpu_of_rank;
  PointResult result;
};

/// The directory the batch reads placement files from; removed at the end. Under the current directory
/// with --ranks (MPI ranks on other hosts read it, as batch.cpp's work directory), else the temp directory.
class ScratchDir {
 public:
  explicit ScratchDir(bool shared) {
    path_ = (shared ? fs::current_path() : scratch_root()) / (".exasim-place-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(path_, ec);
    fs::create_directories(path_, ec);
    if (ec) throw InputError(path_.string(), "", "cannot create the placement files' directory: " + ec.message());
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string placement_text(const std::vector<std::uint32_t>& gpu_of_rank, const std::string& label) {
  std::string text = "# exasim place: " + label + "; line i = GPU of rank i\n";
  for (const auto g : gpu_of_rank) text += std::to_string(g) + "\n";
  return text;
}

nlohmann::json with_placement_file(const scenario::Scenario& s, const std::string& file) {
  auto doc = s.resolved;
  doc["placement"] = {{"policy", "file"}, {"file", file}};
  doc.erase("job");  // place scores iterations; a job object would price each run too (batch.hpp)
  return doc;
}

struct PlaceOutcome {
  scenario::Scenario base;
  place::Allocation allocation;
  std::uint32_t nodes_needed = 0;
  place::SearchResult search;
  std::vector<Placed> simulated;  ///< fastest first
  std::vector<std::pair<std::string, std::string>> failed;
  std::size_t candidates_picked = 0;  ///< simulated besides the baselines
  report::Summary planned;            ///< the fastest, simulated again with its links metered (empty when sampled)
  std::optional<api::LayerSampling> sampling;  ///< simulation.sample_layers: every simulation sampled
  [[nodiscard]] const Placed& best() const { return simulated.front(); }
  [[nodiscard]] const Placed* baseline(const std::string& name) const {
    for (const auto& p : simulated)
      if (p.baseline && p.label == name) return &p;
    return nullptr;
  }
  /// The reference: packed on the whole machine, the scheduler's order in an allocation.
  [[nodiscard]] const Placed* reference() const { return baseline(allocation.from_file ? "scheduler" : "packed"); }
};

PlaceOutcome plan_placement(const scenario::Scenario& base, const std::string& nodes_file, double budget_s,
                            std::int64_t top, const BatchOptions& batch, std::ostream& log) {
  PlaceOutcome t;
  t.base = base;
  // Sampled, every placement is simulated from K and 2K layers (a 32,768-GCD spread run takes minutes
  // whole, seconds sampled); the plan's links are then not metered, which needs every layer.
  t.sampling = api::layer_sampling(base);
  const auto topology = scenario::build_topology(base.machine, base.gpus, base.seed);
  const std::uint32_t per_node = topology->gpus_per_node();
  t.nodes_needed = (base.gpus + per_node - 1) / per_node;
  t.allocation = nodes_file.empty() ? place::whole_machine(*topology)
                                    : place::read_allocation(nodes_file, *topology, t.nodes_needed);
  t.search = place::search(base, *topology, t.allocation, {budget_s});
  const auto& plan_grid = t.search.grid;

  // Baselines with the grid's own layout, then the best `top` candidates by score that route differently
  // from every one picked before (the same ring bandwidths give the same score: nothing new to learn).
  std::vector<Placed> picked;
  std::set<std::vector<double>> rings_seen;
  std::vector<std::uint8_t> identity(plan_grid.dims().size());
  for (std::size_t d = 0; d < identity.size(); ++d) identity[d] = static_cast<std::uint8_t>(d);
  for (const auto& c : t.search.ranked) {
    const auto& order = t.search.orders[c.order];
    if (order.baseline && c.local == 0 && c.dims == identity) {
      picked.push_back(
          {order.label, true, c.analytic_s, place::gpu_of_rank(plan_grid, c.dims, order.nodes, per_node), {}});
      rings_seen.insert(c.ring_Bps);
    }
  }
  std::stable_sort(picked.begin(), picked.end(), [&](const Placed& a, const Placed& b) {
    auto rank = [&](const Placed& p) {
      for (std::size_t o = 0; o < t.search.orders.size(); ++o)
        if (t.search.orders[o].label == p.label) return o;
      return t.search.orders.size();
    };
    return rank(a) < rank(b);
  });
  std::int64_t candidates = 0;
  for (const auto& c : t.search.ranked) {
    if (candidates >= top) break;
    if (!rings_seen.insert(c.ring_Bps).second) continue;
    const auto& order = t.search.orders[c.order];
    std::string label = order.label + " / dims " + place::dims_label(plan_grid, c.dims);
    if (c.local != 0) label += " / " + t.search.locals[c.local].label;
    picked.push_back({label,
                      false,
                      c.analytic_s,
                      place::gpu_of_rank(plan_grid, c.dims, order.nodes, per_node, t.search.locals[c.local].gpus),
                      {}});
    ++candidates;
  }
  t.candidates_picked = static_cast<std::size_t>(candidates);

  ScratchDir scratch(batch.ranks > 0);
  std::vector<nlohmann::json> docs;
  for (std::size_t i = 0; i < picked.size(); ++i) {
    const auto file = scratch.path() / ("placement-" + std::to_string(i) + ".txt");
    try {
      write_stream_checked(file.string(),
                           [&](std::ostream& out) { out << placement_text(picked[i].gpu_of_rank, picked[i].label); });
    } catch (const std::runtime_error& e) {  // a full or read-only TMPDIR (or current folder with --ranks)
      throw InputError(scratch.path().string(), "", std::string("cannot write the candidate placements: ") + e.what());
    }
    docs.push_back(with_placement_file(base, file.string()));
  }
  log << "exasim: simulating " << docs.size() << " placements"
      << (t.sampling ? " from " + std::to_string(t.sampling->fewer) + " and " + std::to_string(t.sampling->more) +
                           " layers each\n"
                     : " in full\n");
  const auto rows = run_batch(docs, batch, log);
  std::vector<nlohmann::json> docs_of;
  for (std::size_t i = 0; i < picked.size(); ++i) {
    picked[i].result = rows[i];
    if (rows[i].error.empty())
      t.simulated.push_back(std::move(picked[i])), docs_of.push_back(docs[i]);
    else
      t.failed.emplace_back(picked[i].label, rows[i].error);
  }
  if (t.simulated.empty()) throw InputError(base.source, "", "no placement could be simulated: " + t.failed[0].second);
  std::vector<std::size_t> by_time(t.simulated.size());
  for (std::size_t i = 0; i < by_time.size(); ++i) by_time[i] = i;
  std::stable_sort(by_time.begin(), by_time.end(), [&](std::size_t a, std::size_t b) {
    return t.simulated[a].result.iteration_time_s < t.simulated[b].result.iteration_time_s;
  });
  std::vector<Placed> sorted;
  for (const auto i : by_time) sorted.push_back(std::move(t.simulated[i]));
  const auto best_doc = docs_of[by_time.front()];
  t.simulated = std::move(sorted);

  if (t.sampling) return t;  // a sampled run meters no links of the iteration (t.planned stays empty)
  // The plan once more, its links metered: the hot links it leaves, and a check that the file re-simulates
  // to the time claimed.
  api::SimulateOptions metered;
  metered.hottest_links = 5;
  t.planned = api::simulate(scenario::parse_scenario(best_doc, base.source), metered);
  if (t.planned.iteration_time_s != t.best().result.iteration_time_s)
    log << "exasim: warning: the planned placement re-simulated to " << t.planned.iteration_time_s << " s, not "
        << t.best().result.iteration_time_s << " s\n";
  return t;
}

double improvement_pct(const PlaceOutcome& t, const Placed* reference) {
  if (!reference) return 0;
  return 100 * (1 - t.best().result.iteration_time_s / reference->result.iteration_time_s);
}

nlohmann::ordered_json place_json(const PlaceOutcome& t) {
  nlohmann::ordered_json baselines = nlohmann::ordered_json::object(), ranked = nlohmann::ordered_json::array();
  for (const auto& p : t.simulated) {
    if (p.baseline) baselines[p.label] = p.result.iteration_time_s;
    ranked.push_back({{"placement", p.label},
                      {"baseline", p.baseline},
                      {"analytic_iteration_s", p.analytic_s},
                      {"iteration_time_s", p.result.iteration_time_s},
                      {"percent_of_peak", p.result.percent_of_peak}});
  }
  const auto links = report::to_json(t.planned);
  nlohmann::ordered_json out = {{"scenario", t.base.name},
                                {"gpus", t.base.gpus},
                                {"layers", t.base.model.layers},
                                {"nodes_needed", t.nodes_needed},
                                {"allocation", {{"source", t.allocation.source}, {"nodes", t.allocation.nodes.size()}}},
                                {"node_orders", t.search.orders.size()},
                                {"node_orders_scored", t.search.orders_scored},
                                {"local_gpu_orders", t.search.locals.size()},
                                {"dim_orders", t.search.dim_orders},
                                {"budget_reached", t.search.budget_reached()},
                                {"candidates_scored", t.search.ranked.size()},
                                {"baselines", baselines},
                                {"planned", t.best().label},
                                {"planned_iteration_s", t.best().result.iteration_time_s},
                                {"improvement_vs_packed_pct",  // null in an allocation: no packed baseline
                                 t.baseline("packed") ? nlohmann::ordered_json(improvement_pct(t, t.baseline("packed")))
                                                      : nlohmann::ordered_json(nullptr)}};
  if (t.allocation.from_file) out["improvement_vs_scheduler_pct"] = improvement_pct(t, t.baseline("scheduler"));
  out["sampled_layers"] = t.sampling ? nlohmann::ordered_json{{"fewer", t.sampling->fewer}, {"more", t.sampling->more}}
                                     : nlohmann::ordered_json(nullptr);
  out["ranked"] = ranked;
  out["hot_links"] = links.contains("links") ? links["links"]["hottest"] : nlohmann::ordered_json::array();
  return out;
}

void print_place(std::ostream& out, const PlaceOutcome& t) {
  const auto& b = t.base;
  out << "exasim place: " << b.model.name << " (" << b.model.layers << " layers) on " << b.gpus << " x "
      << b.machine.gpu_choice.device.name << " (" << b.machine.name << "), " << scenario::scheme_of(b).name << " "
      << scenario::scheme_of(b).label(*b.parallel, b.training.recompute) << "\n";
  out << "  allocation: " << t.allocation.nodes.size() << " nodes (" << t.allocation.source << "), the job needs "
      << t.nodes_needed << "\n";
  out << "  scored " << t.search.ranked.size() << " placements (" << t.search.orders_scored << " node orders x "
      << t.search.locals.size() << " GPU orders in a node x " << t.search.dim_orders
      << " grid dimension orders) analytically";
  if (t.search.budget_reached())
    out << "; the budget stopped the search after " << t.search.orders_scored << " of " << t.search.orders.size()
        << " node orders";
  out << "\n  simulated the baselines and the best " << t.candidates_picked
      << " candidates by score, ranked by simulated time";
  if (t.sampling)
    out << "\n  (approximate: " << t.sampling->fewer << " and " << t.sampling->more << " of " << t.sampling->layers
        << " layers simulated each, times extrapolated: simulation.sample_layers;\n   errors of a few "
           "percent, so simulate close candidates whole)";
  out << ":\n";
  char line[320];
  const Placed* reference = t.reference();
  std::snprintf(line, sizeof line, "  %4s  %-72s %11s %12s %8s\n", "rank",
                "placement (node order / dims, innermost first / GPUs in a node)", "analytic_s", "simulated_s",
                reference ? ("vs " + reference->label).c_str() : "");
  out << line;
  for (std::size_t i = 0; i < t.simulated.size(); ++i) {
    const auto& p = t.simulated[i];
    const std::string label = p.baseline ? p.label + " (baseline)" : p.label;
    std::snprintf(line, sizeof line, "  %4zu  %-72s %11.3f %12.3f %7.1f%%\n", i + 1, label.c_str(), p.analytic_s,
                  p.result.iteration_time_s,
                  reference ? 100 * (p.result.iteration_time_s / reference->result.iteration_time_s - 1) : 0.0);
    out << line;
  }
  for (const auto& [label, error] : t.failed) out << "  not simulated: " << label << ": " << error << "\n";
  std::snprintf(line, sizeof line, ": %.3f s per iteration", t.best().result.iteration_time_s);
  out << "  planned: " << t.best().label << line;
  if (reference) {
    std::snprintf(line, sizeof line, ", %.1f%% faster than %s", improvement_pct(t, reference),
                  reference->label.c_str());
    out << line;
  }
  out << "\n";
  if (t.sampling)
    out << "  hottest links of the plan: not metered under layer sampling (simulate the written scenario with "
           "--set simulation.sample_layers=0 --links 5)\n";
  if (t.planned.links && !t.planned.links->hottest.empty()) {
    out << "  hottest links of the plan:\n";
    for (const auto& h : t.planned.links->hottest) {
      std::snprintf(line, sizeof line, "    %5.1f%%  %-9s %s -> %s\n", 100 * h.utilisation, h.link_class.c_str(),
                    h.from.c_str(), h.to.c_str());
      out << line;
    }
  }
}

void write_out(OutputFiles& files, const PlaceOutcome& t) {
  files.stage_text("placement.txt", placement_text(t.best().gpu_of_rank, t.best().label));
  auto doc = with_placement_file(t.base, "placement.txt");  // beside the scenario (placement.hpp)
  doc["name"] = t.base.name + "-placed";
  files.stage_text("scenario.json", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  std::ostringstream csv;
  csv << "placement,baseline,analytic_iteration_s,iteration_time_s,percent_of_peak,mfu_percent\n";
  const auto number = [](double x) {
    return nlohmann::json(x).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  for (const auto& p : t.simulated)
    csv << report::csv_line({p.label, p.baseline ? "1" : "0", number(p.analytic_s), number(p.result.iteration_time_s),
                             number(p.result.percent_of_peak), number(p.result.mfu_percent)})
        << '\n';
  files.stage_text("place.csv", csv.str());
  // Where the plan and its baseline put the job, and their hot links (place_network.hpp).
  const PlacedRanks plan{t.best().label, &t.best().gpu_of_rank, t.planned.links ? &*t.planned.links : nullptr};
  std::optional<PlacedRanks> reference;
  if (const Placed* r = t.reference()) reference = PlacedRanks{r->label, &r->gpu_of_rank, nullptr};
  files.stage_text("place_network.json",
                   place_network_json(t.base, plan, reference ? &*reference : nullptr, 5).dump(2) + "\n");
  files.commit();
}

}  // namespace

PlacedConfig place_scenario(const scenario::Scenario& s, double budget_s, std::int64_t top, const BatchOptions& batch,
                            std::ostream& log) {
  const auto t = plan_placement(s, "", budget_s, top, batch, log);
  PlacedConfig p;
  if (const Placed* reference = t.reference()) {
    p.reference = reference->label;
    p.reference_s = reference->result.iteration_time_s;
  }
  p.plan = t.best().label;
  p.plan_s = t.best().result.iteration_time_s;
  p.placements = t.simulated.size();
  return p;
}

Command add_place_command(CLI::App& app) {
  struct Options {
    std::string scenario_path, out_dir, nodes_file;
    std::vector<std::string> overrides;
    double budget_s = 60;
    std::int64_t top = 4;
    std::int64_t sample_layers = 0;
    BatchOptions batch;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("place", "Plan where the ranks of a job go on the machine (docs/place.md)");
  cmd->add_option("scenario", o->scenario_path, "Scenario JSON file (axonn4d)")->required();
  cmd->add_option("--nodes", o->nodes_file,
                  "The allocation: a file of node ids, one per line or comma-separated ranges such as 12-40,77 "
                  "(default: the whole machine)");
  cmd->add_option("--budget-s", o->budget_s, "Wall seconds for the analytic search")->capture_default_str();
  cmd->add_option("--top", o->top, "Simulate the best K candidates of the search in full, besides the baselines")
      ->capture_default_str();
  add_batch_flags(*cmd, o->batch);
  cmd->add_flag("--json", o->json, "Print one JSON object instead of the table");
  cmd->add_option("--out", o->out_dir,
                  "Write placement.txt (the plan), scenario.json (a scenario using it), place.csv and "
                  "place_network.json (groups and hot links of the plan and its baseline) here");
  cmd->add_option("--set", o->overrides, "Override a scenario field: path=value (repeatable)")->allow_extra_args(false);
  add_sample_layers_flag(*cmd, o->sample_layers);
  return {cmd, [o, cmd](std::ostream& out, std::ostream& err) {
            if (!(o->budget_s > 0) || !(o->budget_s <= 86400))
              throw InputError(
                  "--budget-s",
                  nlohmann::json(o->budget_s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "must be a number of seconds above 0 and at most 86400");
            if (o->top < 0 || o->top > 1000)
              throw InputError("--top", std::to_string(o->top), "must be a number of candidates from 0 to 1000");
            check_batch_options(o->batch);
            const auto base =
                scenario::load_scenario(o->scenario_path, with_sample_layers(*cmd, o->overrides, o->sample_layers));
            std::unique_ptr<OutputFiles> files;
            if (cmd->count("--out") > 0)  // "" too: OutputFiles refuses it
              files = std::make_unique<OutputFiles>(
                  "--out", o->out_dir,
                  std::vector<std::string>{"placement.txt", "scenario.json", "place.csv", "place_network.json"});
            BatchOptions batch = o->batch;
            batch.progress = !o->json;
            const auto t = plan_placement(base, o->nodes_file, o->budget_s, o->top, batch, err);
            // Wall time goes to the log: the table stays byte-identical run to run.
            err << "exasim: search: " << t.search.ranked.size() << " placements scored in " << t.search.wall_s << " s ("
                << t.search.rings_routed << " rings routed)\n";
            if (o->json)
              out << place_json(t).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
            else
              print_place(out, t);
            if (files) write_out(*files, t);
            return 0;
          }};
}

}  // namespace exasim::cli
