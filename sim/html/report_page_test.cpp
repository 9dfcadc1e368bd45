#include "sim/html/report_page.hpp"

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

#include <catch2/catch.hpp>

#include <fstream>

namespace {
namespace fs = std::filesystem;
using exasim::html::FolderKind;

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("exasim_report_page_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

/// Occurrences of `what` in `text`.
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

/// The centred x labels of every line chart that reach past its right edge (7 units a character, the
/// charts' own estimate at 12 px, rounded up).
std::vector<std::string> clipped_labels(const std::string& html) {
  std::vector<std::string> out;
  const std::string open = "class=\"chart line\" viewBox=\"0 0 ";
  // Plain scanning, not std::regex: GCC 12 warns (maybe-uninitialized) inside <regex> under ASan.
  const std::string text_open = "<text x=\"", centred = "\" text-anchor=\"middle\">";
  for (auto at = html.find(open); at != std::string::npos; at = html.find(open, at + 1)) {
    const double width = std::stod(html.substr(at + open.size(), 12));
    const std::string chart = html.substr(at, html.find("</svg>", at) - at);
    for (auto t = chart.find(text_open); t != std::string::npos; t = chart.find(text_open, t + 1)) {
      const auto tag_end = chart.find('>', t);
      const auto mid = chart.find(centred, t);
      if (mid == std::string::npos || mid + centred.size() - 1 != tag_end) continue;  // not a centred label
      const double x = std::stod(chart.substr(t + text_open.size()));
      const std::string label = chart.substr(tag_end + 1, chart.find("</text>", tag_end) - tag_end - 1);
      if (label.find('<') != std::string::npos) continue;
      if (x + 3.5 * static_cast<double>(label.size()) > width) out.push_back(label);
    }
  }
  return out;
}

/// A sweep.json row of a point that ran.
std::string sweep_row(const std::string& point, double time, double tflops, double model, double peak, double mfu) {
  char figures[320];
  std::snprintf(figures, sizeof figures,
                R"("iteration_time_s":%g,"memory_per_gpu_bytes":3e10,"mfu_percent":%g,"model_tflops_per_gpu":%g,)"
                R"("percent_of_peak":%g,"tflops_per_gpu":%g,"total_pflops":8)",
                time, mfu, model, peak, tflops);
  std::string row = "{";
  row += figures;
  row += R"(,"parallel":{"gdata":8,"scheme":"axonn4d"},"point":)";
  row += point;
  return row + "}";
}

/// The default scenario resolved, as tune's best.json and place's scenario.json hold it.
std::string resolved_default(const std::string& name) {
  auto s = exasim::scenario::load_scenario(EXASIM_TEST_DATA_DIR "/configs/scenarios/default.json");
  s.resolved["name"] = name;
  return s.resolved.dump(2);
}

// A sweep over gpus as `exasim sweep --out` writes it (sim/cli/sweep_command.cpp), one point failed.
constexpr const char* kSweep = R"({"rows":[
 {"iteration_time_s":4.0,"memory_per_gpu_bytes":3e10,"mfu_percent":30,"model_tflops_per_gpu":100,
  "parallel":{"gdata":8,"scheme":"axonn4d"},"percent_of_peak":40,"point":{"gpus":64},"tflops_per_gpu":125,
  "total_pflops":8,"scaling_efficiency_percent":100},
 {"iteration_time_s":2.5,"memory_per_gpu_bytes":2e10,"mfu_percent":24,"model_tflops_per_gpu":80,
  "parallel":{"gdata":16,"scheme":"axonn4d"},"percent_of_peak":32,"point":{"gpus":128},"tflops_per_gpu":100,
  "total_pflops":12.8,"scaling_efficiency_percent":80},
 {"error":"does not fit <memory>","parallel":{"gdata":32,"scheme":"axonn4d"},"point":{"gpus":256}}],
 "scenario":"toy","tuned":false,"vary":["gpus"],"zip":false})";

}  // namespace

TEST_CASE("report: a folder is told by its files, anything else is an input error", "[unit]") {
  const auto dir = fresh_dir("detect");
  CHECK_THROWS_WITH(exasim::html::detect_folder(dir),
                    Catch::Contains("not an exasim output folder: expected summary.json (exasim simulate --out), "
                                    "sweep.json (exasim sweep --out), tune.csv (exasim tune --out), place.csv "
                                    "(exasim place --out) or job.json (exasim job --out)"));
  CHECK_THROWS_AS(exasim::html::detect_folder(dir / "missing"), exasim::InputError);
  write(dir / "place.csv", "placement\n");
  CHECK(exasim::html::detect_folder(dir) == FolderKind::place);
  write(dir / "tune.csv", "gx\n");
  CHECK(exasim::html::detect_folder(dir) == FolderKind::tune);
  write(dir / "sweep.json", "{}");
  CHECK(exasim::html::detect_folder(dir) == FolderKind::sweep);
  write(dir / "summary.json", "{}");
  CHECK(exasim::html::detect_folder(dir) == FolderKind::simulate);
  // summary.json without its fields: the error names the file and the field.
  CHECK_THROWS_WITH(exasim::html::render_report(dir), Catch::Contains("summary.json: scenario"));
  // exasim job writes summary.json beside job.json: the folder is a job's.
  write(dir / "job.json", "{}");
  CHECK(exasim::html::detect_folder(dir) == FolderKind::job);
  CHECK_THROWS_WITH(exasim::html::render_report(dir), Catch::Contains("job.json: scenario"));
}

TEST_CASE("report: a sweep page has its curves, its rows and the failed point", "[unit]") {
  const auto dir = fresh_dir("sweep");
  write(dir / "sweep.json", kSweep);
  const auto page = exasim::html::render_report(dir);
  CHECK(page.kind == FolderKind::sweep);
  CHECK(page.title == "toy");
  CHECK(page.charts == std::vector<std::string>{"sweep-time", "sweep-tflops", "sweep-efficiency"});
  // The table prints the figures of sweep.json: 2.5 s at 128 GPUs, its 80% efficiency.
  CHECK_THAT(page.html, Catch::Contains("<td>128</td><td>gdata=16</td><td>2.5000</td><td>100.0</td>"));
  CHECK_THAT(page.html, Catch::Contains("<td>80.0</td>"));
  // The failed point's error is escaped, and it has no dot on the curves (two points drawn per series).
  CHECK_THAT(page.html, Catch::Contains("not simulated: does not fit &lt;memory&gt;"));
  CHECK_THAT(page.html, Catch::Contains("iteration time at 128: 2.5</title>"));
  CHECK_THAT(page.html, !Catch::Contains("iteration time at 256"));
  // Self-contained: nothing loaded from elsewhere (the SVG namespace URI is a name, not a fetch).
  for (const char* fetch : {" src=", " href=", "@import", "url(", "fetch(", "XMLHttpRequest"})
    CHECK_THAT(page.html, !Catch::Contains(fetch));
  // Deterministic.
  CHECK(exasim::html::render_report(dir).html == page.html);
}

TEST_CASE("report: a tune page ranks the simulated grids by simulated time", "[unit]") {
  const auto dir = fresh_dir("tune");
  write(dir / "tune.csv",
        "gx,gy,gz,gdata,analytic_iteration_s,memory_per_gpu_bytes,iteration_time_s,percent_of_peak,tflops_per_gpu\n"
        "1,2,4,8,1.0,3e10,1.3,40,120\n"
        "2,2,2,8,1.1,3e10,1.2,44,130\n"
        "4,2,1,8,1.5,3e10,,,\n");
  const auto page = exasim::html::render_report(dir);
  CHECK(page.charts == std::vector<std::string>{"tune-ranking"});
  // The analytic second is the simulated first.
  CHECK_THAT(page.html, Catch::Contains("<div class=\"v\" id=\"best-grid\">gx=2 gy=2 gz=2 gdata=8</div>"));
  CHECK_THAT(page.html, Catch::Contains("1. gx=2 gy=2 gz=2 gdata=8"));
  CHECK_THAT(page.html, Catch::Contains("2. gx=1 gy=2 gz=4 gdata=8"));
  write(dir / "tune.csv",
        "gx,gy,gz,gdata,analytic_iteration_s,memory_per_gpu_bytes,iteration_time_s,percent_of_peak,tflops_per_gpu\n"
        "1,2,4,8,fast,3e10,,,\n");
  CHECK_THROWS_WITH(exasim::html::render_report(dir),
                    Catch::Contains("tune.csv: row 1 analytic_iteration_s: 'fast' is not a finite number"));
  write(dir / "tune.csv", "a,b\n");
  CHECK_THROWS_WITH(exasim::html::render_report(dir), Catch::Contains("tune.csv: line 1: expected the header gx,gy"));
}

TEST_CASE("report: a tune --scheme all page names each configuration as tune prints it", "[unit]") {
  // tune --out with --scheme megatron or all: the scheme and every scheme's columns (tune_command.cpp).
  const auto dir = fresh_dir("tune_all");
  write(dir / "tune.csv",
        "scheme,gx,gy,gz,gdata,tp,cp,pp,dp,zero,micro_batch,virtual_stages,sequence_parallel,ep,etp,recompute,"
        "analytic_iteration_s,memory_per_gpu_bytes,iteration_time_s,percent_of_peak,tflops_per_gpu\n"
        "megatron,,,,,4,1,1,4,3,4,1,true,1,4,none,1.0,4e9,1.3,34,107\n"
        "axonn4d,1,2,4,2,,,,,,,,,,,full,1.1,21e9,1.2,44,130\n"
        "megatron,,,,,2,1,2,4,1,1,2,false,1,2,selective,1.5,3e9,,,\n"
        "megatron,,,,,2,2,2,2,1,1,2,false,1,2,none,1.6,2e9,,,\n");
  const auto page = exasim::html::render_report(dir);
  CHECK(page.charts == std::vector<std::string>{"tune-ranking"});
  CHECK_THAT(page.html, Catch::Contains("<div class=\"v\" id=\"best-grid\">axonn4d gx=1 gy=2 gz=4 gdata=2</div>"));
  CHECK_THAT(page.html, Catch::Contains("2. megatron tp=4 pp=1 dp=4 zero=3 mb=4 v=1 sp=on recompute=none"));
  CHECK_THAT(page.html, Catch::Contains("<td>megatron tp=2 pp=2 dp=4 zero=1 mb=1 v=2 sp=off recompute=selective</td>"));
  CHECK_THAT(page.html, Catch::Contains("<td>megatron tp=2 cp=2 pp=2 dp=2 zero=1 mb=1 v=2 sp=off recompute=none</td>"));
  CHECK_THAT(page.html, Catch::Contains("configurations that fit"));
  // Memory with three significant figures, trailing zeros kept: 21.0 GB beside 4.00 GB.
  CHECK_THAT(page.html, Catch::Contains("<td>21.0 GB</td>"));
  CHECK_THAT(page.html, Catch::Contains("<td>4.00 GB</td>"));
  write(dir / "tune.csv", "scheme,gx\nmegatron,1\n");
  CHECK_THROWS_WITH(exasim::html::render_report(dir),
                    Catch::Contains("tune.csv: line 1: expected the header gx,gy,gz,gdata,") &&
                        Catch::Contains(" or scheme,gx,gy,gz,gdata,tp,"));
  // Rows read through the scheme table: a name it lacks, or a cell of the wrong type, names the cell.
  const std::string header =
      "scheme,gx,gy,gz,gdata,tp,cp,pp,dp,zero,micro_batch,virtual_stages,sequence_parallel,ep,etp,recompute,"
      "analytic_iteration_s,memory_per_gpu_bytes,iteration_time_s,percent_of_peak,tflops_per_gpu\n";
  write(dir / "tune.csv", header + "pipeline,,,,,4,1,1,4,3,4,1,true,1,4,none,1.0,4e9,,,\n");
  CHECK_THROWS_WITH(exasim::html::render_report(dir),
                    Catch::Contains("tune.csv: row 1 scheme: 'pipeline' is not one of: axonn4d, megatron"));
  write(dir / "tune.csv", header + "megatron,,,,,4,1,1,4,5,4,1,true,1,4,none,1.0,4e9,,,\n");
  CHECK_THROWS_WITH(exasim::html::render_report(dir),
                    Catch::Contains("tune.csv: row 1 zero: '5' is not an integer from 0 to 3"));
}

TEST_CASE("report: a sweep row's layout reads in the scheme's order, not sweep.json's sorted keys", "[unit]") {
  const auto dir = fresh_dir("sweep_layout");
  write(dir / "sweep.json", R"({"rows":[
 {"iteration_time_s":4.0,"memory_per_gpu_bytes":3e10,"mfu_percent":30,"model_tflops_per_gpu":100,
  "parallel":{"gdata":8,"gx":2,"gy":4,"gz":1,"scheme":"axonn4d"},"percent_of_peak":40,"point":{"x":1},
  "tflops_per_gpu":125,"total_pflops":8},
 {"iteration_time_s":3.0,"memory_per_gpu_bytes":3e10,"mfu_percent":30,"model_tflops_per_gpu":100,
  "parallel":{"dp":2,"pp":2,"scheme":"megatron","sequence_parallel":true,"tp":4,"zero":1},"percent_of_peak":40,
  "point":{"x":2},"tflops_per_gpu":125,"total_pflops":8}],
 "scenario":"toy","tuned":true,"vary":["x"],"zip":false})");
  const auto page = exasim::html::render_report(dir);
  CHECK_THAT(page.html, Catch::Contains("<td>gx=2 gy=4 gz=1 gdata=8</td>"));
  CHECK_THAT(page.html, Catch::Contains("<td>tp=4 pp=2 dp=2 zero=1 sequence_parallel=true</td>"));
}

TEST_CASE("report: a place page ranks the simulated placements against the packed baseline", "[unit]") {
  // exasim place --out (sim/cli/place_command.cpp): the rows in the order place simulated them.
  const std::string header = "placement,baseline,analytic_iteration_s,iteration_time_s\n";
  const auto dir = fresh_dir("place");
  write(dir / "place.csv", header +
                               "\"packed\",1,4.1,5.0\n"
                               "\"spread\",1,4.4,6.0\n"
                               "\"groups packed, dims x,data,z,y\",0,3.9,4.5\n");
  write(dir / "scenario.json", R"({"name":"job-placed"})");
  const auto page = exasim::html::render_report(dir);
  CHECK(page.kind == FolderKind::place);
  CHECK(page.title == "job-placed");
  CHECK(page.charts == std::vector<std::string>{"place-ranking"});
  // The fastest is the plan, 10 % faster than packed; a quoted label keeps its comma.
  CHECK_THAT(page.html, Catch::Contains("<div class=\"v\" id=\"plan\">groups packed, dims x,data,z,y</div>"));
  CHECK_THAT(page.html, Catch::Contains("<div class=\"v\" id=\"change\">-10.0%</div>"));
  CHECK_THAT(page.html, Catch::Contains("3. spread (baseline)"));
  CHECK_THAT(page.html, Catch::Contains("<td>spread</td><td>yes</td><td>4.4000</td><td>6.0000</td><td>+20.0%</td>"));
  CHECK(exasim::html::render_report(dir).html == page.html);
  // Without a packed or scheduler baseline there is no change to show, and the page says so.
  write(dir / "place.csv", header + "\"random 1\",1,4,5\n");
  CHECK_THAT(exasim::html::render_report(dir).notes.front(), Catch::Contains("no packed or scheduler baseline"));
  // Bad rows name the file, the row and the field.
  write(dir / "place.csv", header + "\"packed\",yes,4,5\n");
  CHECK_THROWS_WITH(exasim::html::render_report(dir), Catch::Contains("place.csv: row 1 baseline: must be 0 or 1"));
  write(dir / "place.csv", header + "\"packed\",1,4,slow\n");
  CHECK_THROWS_WITH(exasim::html::render_report(dir),
                    Catch::Contains("place.csv: row 1 iteration_time_s: 'slow' is not a finite number"));
  write(dir / "place.csv", header);
  CHECK_THROWS_WITH(exasim::html::render_report(dir), Catch::Contains("place.csv: has no placement"));
}

TEST_CASE("report: a sweep over two fields charts a series per value of the other, names as grouped bars", "[unit]") {
  const auto dir = fresh_dir("sweep_two");
  write(dir / "sweep.json", R"({"rows":[)" +
                                sweep_row(R"({"routing":"valiant","placement":"packed"})", 4, 120, 100, 40, 30) + "," +
                                sweep_row(R"({"routing":"valiant","placement":"spread"})", 4.5, 110, 90, 36, 27) + "," +
                                sweep_row(R"({"routing":"adaptive","placement":"packed"})", 3, 130, 110, 44, 33) + "," +
                                sweep_row(R"({"routing":"adaptive","placement":"spread"})", 3.5, 125, 105, 42, 31) +
                                R"(],"scenario":"toy","tuned":false,"vary":["routing","placement"],"zip":false})");
  const auto page = exasim::html::render_report(dir);
  // % of peak and MFU per series, as the GPU count does not vary.
  CHECK(page.charts == std::vector<std::string>{"sweep-time", "sweep-tflops", "sweep-peak", "sweep-mfu"});
  // x: each routing once per chart; a series per placement, named in the legend; bars, no lines.
  CHECK(count(page.html, ">valiant</text>") == 4);
  CHECK(count(page.html, ">adaptive</text>") == 4);
  CHECK_THAT(page.html, Catch::Contains(">placement=spread</text>"));
  CHECK_THAT(page.html, Catch::Contains("placement=spread at adaptive: 3.5</title></rect>"));
  CHECK_THAT(page.html, Catch::Contains("placement=packed at valiant: 30</title></rect>"));
  CHECK_THAT(page.html, !Catch::Contains("<path d="));
  CHECK(clipped_labels(page.html).empty());
  CHECK(exasim::html::render_report(dir).html == page.html);
}

TEST_CASE("report: a scaling sweep's efficiency is per series, explained, its labels unclipped", "[unit]") {
  // Weak scaling: the global batch of the second series grows the model TFLOP/s per GPU to 137% of its
  // 4,096-GPU figure.
  const auto dir = fresh_dir("sweep_scaling");
  std::string rows;
  const double model[2][3] = {{100, 90, 80}, {110, 120, 150.7}};
  for (int b = 0; b < 2; ++b)
    for (int g = 0; g < 3; ++g) {
      const std::string point =
          "{\"gpus\":" + std::to_string(4096 << g) + ",\"global_batch\":" + std::to_string(1024 << b) + "}";
      if (!rows.empty()) rows += ',';
      rows += sweep_row(point, 2, 130, model[b][g], 40, 30);
    }
  write(dir / "sweep.json",
        R"({"rows":[)" + rows + R"(],"scenario":"toy","tuned":false,"vary":["gpus","global_batch"],"zip":false})");
  const auto page = exasim::html::render_report(dir);
  CHECK(page.charts == std::vector<std::string>{"sweep-time", "sweep-tflops", "sweep-efficiency"});
  CHECK(count(page.html, ">16384</text>") == 3);
  CHECK_THAT(page.html, Catch::Contains("global_batch=2048 at 16384: 137</title>"));
  CHECK_THAT(page.html, Catch::Contains("global_batch=1024 at 16384: 80</title>"));
  CHECK_THAT(page.html, Catch::Contains("<td>16384</td><td>2048</td><td>gdata=8</td>"));
  CHECK_THAT(page.html, Catch::Contains("<td>137.0</td>"));
  // What efficiency means, beside the chart.
  CHECK_THAT(page.html, Catch::Contains("id=\"efficiency-note\"") && Catch::Contains("smallest GPU count") &&
                            Catch::Contains("above 100%"));
  CHECK(clipped_labels(page.html).empty());
}

TEST_CASE("report: a tune page names the job, has a time axis and shows MFU", "[unit]") {
  const auto dir = fresh_dir("tune_job");
  write(dir / "tune.csv",
        "gx,gy,gz,gdata,analytic_iteration_s,memory_per_gpu_bytes,iteration_time_s,percent_of_peak,tflops_per_gpu,"
        "mfu_percent\n"
        "1,2,4,8,1.0,3e10,1.3,40,120,31\n"
        "2,2,2,8,1.1,3e10,1.2,44,130,33.5\n");
  write(dir / "best.json", resolved_default("default"));
  const auto page = exasim::html::render_report(dir);
  CHECK(page.title == "custom on 64 x a100-40gb (simple-a100), global batch 512");
  CHECK_THAT(page.html, Catch::Contains("<div class=\"v\" id=\"mfu\">33.5%</div>"));
  CHECK_THAT(page.html, Catch::Contains(">simulated iteration time (seconds)</text>"));
  CHECK_THAT(page.html, Catch::Contains("Ranked by simulated iteration time"));
  CHECK_THAT(page.html, Catch::Contains("<td>1.2000</td><td>44.0</td><td>33.5</td><td>130.0</td>"));
  // An older tune.csv, without mfu_percent and without best.json: the page says MFU is unknown.
  write(dir / "tune.csv",
        "gx,gy,gz,gdata,analytic_iteration_s,memory_per_gpu_bytes,iteration_time_s,percent_of_peak,tflops_per_gpu\n"
        "1,2,4,8,1.0,3e10,1.3,40,120\n");
  fs::remove(dir / "best.json");
  const auto older = exasim::html::render_report(dir);
  CHECK(older.title == "tune");
  CHECK_THAT(older.html, Catch::Contains("<div class=\"v\" id=\"mfu\">-</div>"));
  CHECK_THAT(older.notes.back(), Catch::Contains("no MFU"));
}

TEST_CASE("report: a place page names the job and shows the hot links and the group map", "[unit]") {
  const auto dir = fresh_dir("place_network");
  write(dir / "place.csv",
        "placement,baseline,analytic_iteration_s,iteration_time_s,percent_of_peak,mfu_percent\n"
        "\"packed\",1,4.1,5.0,30,22\n"
        "\"round-robin 4 groups\",0,3.9,4.5,33.3,24.4\n");
  write(dir / "scenario.json", resolved_default("default-placed"));
  write(dir / "place_network.json", R"json({"groups":4,"group_gpus":[16,16,16,16],
 "plan":{"placement":"round-robin 4 groups","groups":[{"group":0,"ranks":16,"rank_ranges":"0-7,32-39"},
   {"group":2,"ranks":8,"rank_ranges":"8-15"}],
  "hot_links":[{"link":7,"class":"global","from":"switch 0 (group 0)","to":"switch 9 (group 2)","bytes":2e9,
   "utilisation":0.25}],
  "hot_group_pairs":[{"from":0,"to":2,"bytes":2e9}]},
 "baseline":{"placement":"packed","groups":[{"group":0,"ranks":16,"rank_ranges":"0-15"},
   {"group":1,"ranks":16,"rank_ranges":"16-31"}],
  "hot_links":[{"link":3,"class":"global","from":"switch 1 (group 0)","to":"switch 5 (group 1)","bytes":4e9,
   "utilisation":0.5}],
  "hot_group_pairs":[{"from":0,"to":1,"bytes":4e9}]}})json");
  const auto page = exasim::html::render_report(dir);
  CHECK(page.title == "custom on 64 x a100-40gb (simple-a100), global batch 512");
  CHECK_THAT(page.html, Catch::Contains("exasim place of default-placed: 2 placements simulated"));
  CHECK(page.charts ==
        std::vector<std::string>{"place-ranking", "place-hot-links", "place-group-map", "place-group-map-baseline"});
  CHECK_THAT(page.html, Catch::Contains("<div class=\"v\" id=\"mfu\">24.4%</div>"));
  CHECK_THAT(page.html, Catch::Contains("<td>4.5000</td><td>33.3</td><td>24.4</td><td>-10.0%</td>"));
  CHECK_THAT(page.html, Catch::Contains(">simulated iteration time (seconds)</text>"));
  // The plan's hot link against the baseline's, and the busiest group pairs side by side.
  CHECK_THAT(page.html, Catch::Contains(">plan: switch 0 (group 0) -&gt; switch 9 (group 2) [global]</text>"));
  CHECK_THAT(page.html, Catch::Contains(">packed: switch 1 (group 0) -&gt; switch 5 (group 1) [global]</text>"));
  CHECK_THAT(page.html, Catch::Contains("<td>1</td><td>group 0 -&gt; group 2: 2.00 GB</td><td>group 0 -&gt; group "
                                        "1: 4.00 GB</td>"));
  // The group map: which ranks each group holds, empty groups said so.
  CHECK_THAT(page.html, Catch::Contains("<title>group 2: 8 of its 16 GPUs, ranks 8-15</title>"));
  CHECK_THAT(page.html, Catch::Contains("<title>group 3: none of the job&#39;s ranks</title>"));
  CHECK_THAT(page.html, Catch::Contains("<title>group 1: 16 of its 16 GPUs, ranks 16-31</title>"));
  CHECK(exasim::html::render_report(dir).html == page.html);
  // An older folder: four columns, no place_network.json; the page says what it lacks.
  write(dir / "place.csv", "placement,baseline,analytic_iteration_s,iteration_time_s\n\"packed\",1,4.1,5.0\n");
  fs::remove(dir / "place_network.json");
  const auto older = exasim::html::render_report(dir);
  CHECK(older.charts == std::vector<std::string>{"place-ranking"});
  CHECK_THAT(older.html, !Catch::Contains("id=\"mfu\""));
  CHECK_THAT(older.notes.back(), Catch::Contains("no place_network.json"));
}
