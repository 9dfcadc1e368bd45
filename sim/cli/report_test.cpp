// `exasim report` end to end: the folders simulate, sweep and tune write, read back into pages.
#include "sim/cli/test_support.hpp"

#include "sim/core/json_view.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {
namespace fs = std::filesystem;
using exasim::cli::testing::exasim_run;
using exasim::cli::testing::kGood;

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("exasim_report_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& p) { return exasim::read_input_text(p.string(), "a test output"); }

}  // namespace

TEST_CASE("report of a simulate folder shows its summary, timeline and links", "[integration]") {
  const auto dir = fresh_dir("simulate");
  std::ofstream(dir / "s.json") << kGood;
  const auto sim = exasim_run({"simulate", (dir / "s.json").string(), "--out", (dir / "out").string(), "--trace-ranks",
                               "0-3", "--links", "3", "-q"});
  REQUIRE(sim.code == 0);
  const auto r = exasim_run({"report", (dir / "out").string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("exasim report: scenario (a simulate folder)"));
  CHECK_THAT(r.out, Catch::Contains("charts: memory-bar breakdown-bar kernel-chart timeline hottest-links\n"));
  const auto html = read(dir / "out" / "report.html");
  // The iteration time of summary.json, printed as the text summary prints it (%.4f).
  const auto summary = nlohmann::json::parse(read(dir / "out" / "summary.json"));
  char want[64];
  std::snprintf(want, sizeof want, "id=\"iteration-time\">%.4f s<", summary.at("iteration_time_s").get<double>());
  CHECK_THAT(html, Catch::Contains(want));
  // Four traced ranks, each with its label; the x all-reduce waits drawn in x's colour.
  for (int rank = 0; rank < 4; ++rank) CHECK_THAT(html, Catch::Contains(">rank " + std::to_string(rank) + "</text>"));
  CHECK_THAT(html, !Catch::Contains(">rank 4</text>"));
  CHECK_THAT(html, Catch::Contains("| wait on x |"));
  // links.csv was read: the hottest link listed with its ends and class (its first row: every NIC carries
  // the same bytes in this all-symmetric grid, and nic 0's uplink is link 12 after 12 GPU-GPU links).
  CHECK_THAT(html, Catch::Contains(">nic 0 -&gt; switch 0 (link 12) [nic-up]</text>"));
  // Same folder, same page, byte for byte; --out elsewhere.
  REQUIRE(exasim_run({"report", (dir / "out").string(), "--out", (dir / "again.html").string()}).code == 0);
  CHECK(read(dir / "again.html") == html);
}

TEST_CASE("report of a layer-sampled simulate folder says it is approximate", "[integration]") {
  const auto dir = fresh_dir("sampled");
  auto scenario = nlohmann::json::parse(kGood);
  scenario["model"]["layers"] = 12;
  std::ofstream(dir / "s.json") << scenario.dump();
  const auto sim = exasim_run(
      {"simulate", (dir / "s.json").string(), "--out", (dir / "out").string(), "--sample-layers", "2", "-q"});
  REQUIRE(sim.code == 0);
  const auto r = exasim_run({"report", (dir / "out").string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto html = read(dir / "out" / "report.html");
  CHECK_THAT(html, Catch::Contains("id=\"sampled-note\">Approximate: 2 and 4 layers simulated"));
  // A full run's page has no such note.
  REQUIRE(exasim_run({"simulate", (dir / "s.json").string(), "--out", (dir / "full").string(), "-q"}).code == 0);
  REQUIRE(exasim_run({"report", (dir / "full").string()}).code == 0);
  CHECK_THAT(read(dir / "full" / "report.html"), !Catch::Contains("sampled-note"));
}

TEST_CASE("report of sweep and tune folders", "[integration]") {
  const auto dir = fresh_dir("sweep");
  std::ofstream(dir / "s.json") << kGood;
  const auto sweep = exasim_run({"sweep", (dir / "s.json").string(), "--vary", "gpus=16,32", "--vary",
                                 "parallel.gdata=2,4", "--zip", "--out", (dir / "sweep").string()});
  REQUIRE(sweep.code == 0);
  CHECK(fs::exists(dir / "sweep" / "sweep.csv"));
  const auto r = exasim_run({"report", (dir / "sweep").string()});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("(a sweep folder)\n  charts: sweep-time sweep-tflops sweep-efficiency\n"));
  const auto rows = nlohmann::json::parse(read(dir / "sweep" / "sweep.json")).at("rows");
  char want[64];
  std::snprintf(want, sizeof want, "<td>%.4f</td>", rows.at(1).at("iteration_time_s").get<double>());
  CHECK_THAT(read(dir / "sweep" / "report.html"), Catch::Contains(want));

  const auto tune = exasim_run({"tune", (dir / "s.json").string(), "--top", "2", "--out", (dir / "tune").string()});
  REQUIRE(tune.code == 0);
  const auto t = exasim_run({"report", (dir / "tune").string()});
  REQUIRE(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("(a tune folder)\n  charts: tune-ranking\n"));
}

TEST_CASE("report of a folder that is none exits 2 and writes nothing", "[unit]") {
  const auto dir = fresh_dir("bad");
  const auto r = exasim_run({"report", dir.string()});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("exasim: error: " + dir.string() + ": not an exasim output folder"));
  CHECK(!fs::exists(dir / "report.html"));
  const auto missing = exasim_run({"report", (dir / "nope").string()});
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("nope: no such folder"));
  CHECK(!fs::exists(dir / "nope"));
  std::ofstream(dir / "s.json") << kGood;
  REQUIRE(exasim_run({"simulate", (dir / "s.json").string(), "--out", (dir / "run").string(), "-q"}).code == 0);
  // --out naming a folder, or nothing: refused, no page written.
  fs::create_directories(dir / "taken");
  const auto taken = exasim_run({"report", (dir / "run").string(), "--out", (dir / "taken").string()});
  CHECK(taken.code == 2);
  CHECK_THAT(taken.err, Catch::StartsWith("exasim: error: --out: "));
  const auto empty = exasim_run({"report", (dir / "run").string(), "--out", ""});
  CHECK(empty.code == 2);
  CHECK_THAT(empty.err, Catch::Contains("exasim: error: --out: must name a file, e.g. report.html"));
  const auto few = exasim_run({"report", (dir / "run").string(), "--max-events", "5"});
  CHECK(few.code == 2);
  CHECK_THAT(few.err, Catch::Contains("exasim: error: --max-events: 5: must be in [100, 1000000]"));
  CHECK(!fs::exists(dir / "run" / "report.html"));
  // A real summary.json with one field spoilt: the error names the file and the field.
  auto summary = nlohmann::json::parse(read(dir / "run" / "summary.json"));
  summary["iteration_time_s"] = "slow";
  std::ofstream(dir / "run" / "summary.json") << summary.dump();
  const auto bad = exasim_run({"report", (dir / "run").string()});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("summary.json: iteration_time_s:"));
}

TEST_CASE("report of a job folder charts goodput over the checkpoint interval", "[integration]") {
  const auto dir = fresh_dir("job");
  auto scenario = nlohmann::json::parse(kGood);
  scenario["job"] = nlohmann::json::parse(R"({"steps": 1000, "failures": {"per_gpu_hour": 1e-3, "restart_s": 60},
    "checkpoint": {"write_Bps": 1e9}, "cost_per_gpu_hour": 2})");
  std::ofstream(dir / "s.json") << scenario.dump();
  const auto job = exasim_run({"job", (dir / "s.json").string(), "--out", (dir / "out").string()});
  INFO(job.err);
  REQUIRE(job.code == 0);
  CHECK_THAT(job.out, Catch::Contains("files written to " + (dir / "out").string() + ": job.json summary.json"));
  const auto r = exasim_run({"report", (dir / "out").string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("(a job folder)"));
  CHECK_THAT(r.out, Catch::Contains("charts: job-goodput-interval\n"));
  const auto html = read(dir / "out" / "report.html");
  // The goodput card prints job.json's goodput with 4 decimals; the what-if table has its five rows.
  const auto j = nlohmann::json::parse(read(dir / "out" / "job.json"));
  char want[64];
  std::snprintf(want, sizeof want, "id=\"job-goodput\">%.4f<", j.at("goodput").get<double>());
  CHECK_THAT(html, Catch::Contains(want));
  CHECK_THAT(html, Catch::Contains("<td>ideal (none of them)</td>"));
  CHECK_THAT(html, Catch::Contains("optimum (searched)"));
  CHECK_THAT(html, Catch::Contains("optimum (simulated runs)"));
  CHECK_THAT(html, Catch::Contains("goodput of simulated runs"));
  CHECK(j.at("checkpoint").at("simulated_runs").get<int>() == 200);

  // Time to train over the GPU count: a sweep of the job scenario, its page charts the job's figures.
  const auto sweep = exasim_run({"sweep", (dir / "s.json").string(), "--vary", "gpus=16,32", "--vary",
                                 "parallel.gdata=2,4", "--zip", "--out", (dir / "sweep").string()});
  INFO(sweep.err);
  REQUIRE(sweep.code == 0);
  const auto page = exasim_run({"report", (dir / "sweep").string()});
  INFO(page.err);
  REQUIRE(page.code == 0);
  CHECK_THAT(page.out, Catch::Contains("sweep-days") && Catch::Contains("sweep-goodput"));
}

TEST_CASE("sweep varies job keys and adds the job's figures to each point", "[integration]") {
  const auto dir = fresh_dir("job_sweep");
  auto scenario = nlohmann::json::parse(kGood);
  scenario["job"] = nlohmann::json::parse(R"({"steps": 1000, "failures": {"per_gpu_hour": 1e-3, "restart_s": 60},
    "checkpoint": {"write_Bps": 1e9}})");
  std::ofstream(dir / "s.json") << scenario.dump();
  const auto sweep =
      exasim_run({"sweep", (dir / "s.json").string(), "--vary", "job.checkpoint.interval_s=1,1000000", "--json"});
  INFO(sweep.err);
  REQUIRE(sweep.code == 0);
  const auto rows = nlohmann::json::parse(sweep.out).at("rows");
  REQUIRE(rows.size() == 2);
  // The same iteration at both points; a checkpoint every step, or one per 10^6 s (longer than the run,
  // so every failure loses all the work since the start), each costs goodput against the job's own optimum.
  CHECK(rows[0].at("iteration_time_s") == rows[1].at("iteration_time_s"));
  const auto job = exasim_run({"job", (dir / "s.json").string(), "--json"});
  REQUIRE(job.code == 0);
  const double optimum = nlohmann::json::parse(job.out).at("goodput").get<double>();
  for (const auto& row : rows) CHECK(row.at("job").at("goodput").get<double>() < optimum);
  const auto table = exasim_run({"sweep", (dir / "s.json").string(), "--vary", "job.checkpoint.interval_s=1,1000000"});
  CHECK_THAT(table.out, Catch::Contains("days  goodput        MWh"));
}
