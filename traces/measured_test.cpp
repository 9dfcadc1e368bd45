#include "traces/measured.hpp"
#include "traces/trace_summary.hpp"

#include "sim/core/error.hpp"

#include <sys/stat.h>
#include <zlib.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

using namespace exasim;
using namespace exasim::trace;

namespace {

std::string testdata(const std::string& name) { return std::string(EXASIM_TEST_DATA_DIR) + "/traces/testdata/" + name; }

std::string measured_temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("exasim_measured_test_" + name)).string();
}

std::string write_file(const std::string& name, const std::string& text) {
  auto path = measured_temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return text;
}

// The independent computation the summary is checked against: the whole file as a DOM, plain loops,
// and a union of intervals by sorting and sweeping (no code shared with traces/).
struct Independent {
  std::vector<std::pair<std::string, double>> steps;  // name, dur (us)
  std::size_t kernels = 0;
  double kernel_us = 0, busy_us = 0;
  std::map<std::string, std::size_t> coll_count;  // by "Collective name"
  std::map<std::string, double> coll_us, coll_bytes;
};

Independent independent(const std::string& path) {
  const auto doc = nlohmann::json::parse(gunzip(path));
  Independent r;
  std::vector<std::pair<double, double>> spans;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.value("ph", "") != "X") continue;
    const auto cat = e.value("cat", "");
    const auto name = e.value("name", "");
    if (cat == "user_annotation" && name.rfind("ProfilerStep#", 0) == 0)
      r.steps.emplace_back(name, e["dur"].get<double>());
    if (cat != "kernel") continue;
    ++r.kernels;
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    r.kernel_us += dur;
    spans.emplace_back(ts, ts + dur);
    if (name.rfind("nccl", 0) != 0) continue;
    const auto& a = e["args"];
    const auto coll = a.value("Collective name", "?");
    ++r.coll_count[coll];
    r.coll_us[coll] += dur;
    const double elem = a.value("dtype", "") == "Float" ? 4 : a.value("dtype", "") == "Long" ? 8 : 0;
    r.coll_bytes[coll] += elem * a.value("In msg nelems", 0.0);
  }
  std::sort(spans.begin(), spans.end());
  double end = -1e300;
  for (const auto& [s, e] : spans) {
    if (s > end) {
      r.busy_us += e - s;
      end = e;
    } else if (e > end) {
      r.busy_us += e - end;
      end = e;
    }
  }
  return r;
}

void check_against_independent(const TraceSummary& s, const Independent& ind) {
  REQUIRE(s.steps.size() == ind.steps.size());
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    CHECK(s.steps[i].name == ind.steps[i].first);
    CHECK(s.steps[i].duration_s == Approx(ind.steps[i].second * 1e-6).epsilon(1e-12));
  }
  CHECK(s.kernels == ind.kernels);
  CHECK(s.kernel_time_s == Approx(ind.kernel_us * 1e-6).epsilon(1e-9));
  CHECK(s.gpu_busy_s == Approx(ind.busy_us * 1e-6).epsilon(1e-9));
  double classes = 0;
  for (double c : s.classes) classes += c;
  CHECK(classes == Approx(s.kernel_time_s).epsilon(1e-12));
}

}  // namespace

// Expected figures: Independent above; the same numbers came from a python3 one-off (json.load of the
// gunzipped file, plain sums, a sorted sweep for the union): a100 2,700 kernels, 162,532.340 us kernel
// time, 155,215.309 us busy, steps #4-#6 of 222,442.191 / 219,726.905 / 224,936.243 us, 15 allreduce
// (46,762.159 us, 306,684,384 bytes), 6 broadcast (114.334 us, 638,712 bytes), exposed 39,559.466 us.
TEST_CASE("the A100 NCCL trace summarises as an independent DOM pass counts it", "[integration]") {
  const auto path = testdata("a100-2rank-nccl.json.gz");
  const auto trace = read_kineto(path);
  const auto s = summarize(trace);
  check_against_independent(s, independent(path));
  const auto ind = independent(path);
  CHECK(s.device == "NVIDIA A100-PG509-200");
  CHECK(s.rank == 0);
  const auto& ar = s.collectives[static_cast<std::size_t>(CollectiveKind::AllReduce)];
  const auto& bc = s.collectives[static_cast<std::size_t>(CollectiveKind::Broadcast)];
  CHECK(ar.count == ind.coll_count.at("allreduce"));
  CHECK(ar.time_s == Approx(ind.coll_us.at("allreduce") * 1e-6).epsilon(1e-9));
  CHECK(ar.bytes == ind.coll_bytes.at("allreduce"));
  CHECK(bc.count == ind.coll_count.at("broadcast"));
  CHECK(bc.bytes == ind.coll_bytes.at("broadcast"));
  CHECK(s.classes[static_cast<std::size_t>(KernelClass::Collective)] ==
        Approx((ind.coll_us.at("allreduce") + ind.coll_us.at("broadcast")) * 1e-6).epsilon(1e-9));
  CHECK(s.exposed_comm_s == Approx(39559.466e-6).epsilon(1e-6));  // python one-off, see above
  CHECK(s.copies == 960 + 114);                                   // gpu_memcpy + gpu_memset events
  // Every kernel is launched inside one of the three steps (the profiler's warm-up is outside the window).
  std::uint64_t in_steps = 0;
  for (const auto& st : s.steps) in_steps += st.kernels;
  CHECK(in_steps == s.kernels);
}

TEST_CASE("the MI250 ROCm trace summarises as an independent DOM pass counts it", "[integration]") {
  const auto path = testdata("mi250-rocm-minitoy.json.gz");
  const auto trace = read_kineto(path);
  const auto s = summarize(trace);
  check_against_independent(s, independent(path));
  CHECK(s.device == "AMD Radeon Graphics");
  CHECK(s.kernels == 14);
  // Two Tensile GEMMs (Cijk_*: 17.6 + 12.64 us in the file), 12 at::native memory-bound kernels, nothing else.
  CHECK(s.classes[static_cast<std::size_t>(KernelClass::Gemm)] == Approx(30.24e-6).epsilon(1e-9));
  CHECK(s.classes[static_cast<std::size_t>(KernelClass::Other)] == 0);
  CHECK(s.exposed_comm_s == 0);
  // record_shapes: the forward addmm (mat1 5x128, mat2 128x128) and the backward mm (128x5 by 5x128).
  bool addmm = false, mm = false;
  for (const auto& k : trace.kernels) {
    if (k.cls != KernelClass::Gemm) continue;
    const auto& op = trace.op_shapes.at(k.external_id);
    addmm |= op.op == "aten::addmm" && op.m == 5 && op.n == 128 && op.k == 128 && op.dtype == "float";
    mm |= op.op == "aten::mm" && op.m == 128 && op.n == 128 && op.k == 5;
  }
  CHECK(addmm);
  CHECK(mm);
}

// A hand-made trace with one kernel per class and two streams. Times by hand (us):
//   stream 7: gemm [0,10), memory [20,25), attention [40,50)
//   stream 9: all_reduce [5,30) (4 Mi bf16 = 8 MiB), all_gather [60,70) (out 1024 Float = 4096 B)
// busy = [0,30) + [40,50) + [60,70) = 50; kernel time = 10+5+10+25+10 = 60;
// exposed = all_reduce minus compute: [10,20) + [25,30) = 15, plus all the all_gather: 10 -> 25.
TEST_CASE("a synthetic trace gives the hand-computed classes, busy and exposed times", "[unit]") {
  const std::string text = R"({"deviceProperties": [{"name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85e9}],
    "distributedInfo": {"rank": 3, "world_size": 8},
    "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "ts": -5, "dur": 45},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 40, "dur": 40},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 41, "dur": 1, "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16", "ts": 0, "dur": 10, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "ts": 20, "dur": 5,
     "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "flash_fwd_kernel", "ts": 40, "dur": 10, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ts": 5, "dur": 25,
     "args": {"stream": 9, "In msg nelems": 4194304, "Out msg nelems": 4194304, "dtype": "BFloat16",
              "Group size": 8, "Collective name": "allreduce"}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "ts": 60, "dur": 10,
     "args": {"stream": 9, "In msg nelems": 128, "Out msg nelems": 1024, "dtype": "Float", "correlation": 5}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "ts": 80, "dur": 3},
    {"ph": "i", "name": "Record Window End", "ts": 90}
  ]})";
  const auto path = write_file("synthetic.json", text);
  const auto t = read_kineto(path);
  CHECK(t.rank == 3);
  CHECK(t.world_size == 8);
  CHECK(t.device_memory_bytes == 85e9);
  const auto s = summarize(t);
  CHECK(s.kernels == 5);
  CHECK(s.kernel_time_s == Approx(60e-6));
  CHECK(s.gpu_busy_s == Approx(50e-6));
  CHECK(s.classes[static_cast<std::size_t>(KernelClass::Gemm)] == Approx(10e-6));
  CHECK(s.classes[static_cast<std::size_t>(KernelClass::Memory)] == Approx(5e-6));
  CHECK(s.classes[static_cast<std::size_t>(KernelClass::Attention)] == Approx(10e-6));
  CHECK(s.classes[static_cast<std::size_t>(KernelClass::Collective)] == Approx(35e-6));
  CHECK(s.exposed_comm_s == Approx(25e-6));
  const auto& ar = s.collectives[static_cast<std::size_t>(CollectiveKind::AllReduce)];
  const auto& ag = s.collectives[static_cast<std::size_t>(CollectiveKind::AllGather)];
  CHECK(ar.count == 1);
  CHECK(ar.bytes == 8.0 * 1024 * 1024);  // 4 Mi elements x 2 bytes (bf16)
  CHECK(ag.bytes == 4096);               // all-gather: the output, 1024 x 4 bytes
  CHECK(s.copies == 1);
  CHECK(s.copy_time_s == Approx(3e-6));
  // Steps: by kernel start, except the all-gather, whose launch (correlation 5, at 41) is in step #1.
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].kernels == 3);  // gemm at 0, all_reduce at 5, memory at 20 (step #0 is [-5, 40])
  CHECK(s.steps[1].kernels == 2);  // attention at 40 (#0 ends at 40, #1 starts there: the later step wins)
  CHECK(s.steps[1].classes[static_cast<std::size_t>(KernelClass::Collective)] == Approx(10e-6));

  // The same file gzipped reads the same.
  const auto gz = measured_temp_path("synthetic.json.gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  REQUIRE(f != nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  CHECK(summarize(read_kineto(gz)).gpu_busy_s == s.gpu_busy_s);
}

TEST_CASE("exasim's own trace.csv reads as one measured trace per rank", "[unit]") {
  const std::vector<TraceRow> rows = {{0, "L0.qkv.fwd.gemm", "gemm", "", 1e6, 1e9, 0.0, 1e-3},
                                      {0, "L0.qkv.fwd.all_reduce", "all_reduce", "x", 2e6, 0, 1e-3, 3e-3},
                                      {0, "L0.qkv.fwd.all_reduce", "wait", "x", 2e6, 0, 1e-3, 3e-3},
                                      {1, "L0.qkv.fwd.gemm", "gemm", "", 1e6, 1e9, 0.0, 2e-3}};
  const auto path = measured_temp_path("rows.csv");
  write_csv(path, rows);
  const auto traces = read_measured(path);
  REQUIRE(traces.size() == 2);
  const auto s0 = summarize(traces[0]);
  CHECK(s0.kernels == 2);  // the wait row is not a kernel
  CHECK(s0.steps.at(0).duration_s == Approx(3e-3));
  CHECK(s0.exposed_comm_s == Approx(2e-3));
  CHECK(s0.collectives[static_cast<std::size_t>(CollectiveKind::AllReduce)].bytes == 2e6);
  CHECK(summarize(traces[1]).gpu_busy_s == Approx(2e-3));
}

TEST_CASE("malformed traces are input errors naming the file and the field", "[unit]") {
  auto error_of = [](const std::string& path) -> std::string {
    try {
      (void)read_kineto(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  SECTION("truncated JSON") {
    const auto path = write_file("truncated.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "na)");
    const auto what = error_of(path);
    CHECK_THAT(what, Catch::StartsWith(path + ": byte "));
    CHECK_THAT(what, Catch::Contains("not valid JSON"));
  }
  SECTION("truncated gzip") {
    std::ifstream in(testdata("mi250-rocm-minitoy.json.gz"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto path = write_file("truncated.json.gz", bytes.substr(0, bytes.size() / 2));
    CHECK_THAT(error_of(path), Catch::StartsWith(path + ": not a readable (gzip or plain) file: unexpected end"));
  }
  SECTION("a kernel's duration of the wrong type") {
    const auto path = write_file(
        "wrong_type.json",
        R"({"traceEvents": [{"ph": "M"}, {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": "12"}]})");
    CHECK(error_of(path) == path + ": traceEvents[1].dur: must be a number");
  }
  SECTION("a kernel without a start time") {
    const auto path =
        write_file("no_ts.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 1}]})");
    CHECK(error_of(path) == path + ": traceEvents[0].ts: missing: a kernel needs its start time ts (microseconds)");
  }
  SECTION("no kernels") {
    const auto path = write_file(
        "no_kernels.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})");
    CHECK_THAT(error_of(path), Catch::StartsWith(path + ": traceEvents: no GPU kernels"));
  }
  SECTION("JSON that is not a trace") {
    auto path = write_file("object.json", R"({"gpus": 8})");
    CHECK_THAT(error_of(path), Catch::StartsWith(path + ": traceEvents: missing: a Kineto trace is a JSON object"));
    path = write_file("events_not_array.json", R"({"traceEvents": {"ph": "X"}})");
    CHECK(error_of(path) == path + ": traceEvents: must be an array of event objects");
    path = write_file("scalar.json", "42");
    CHECK_THAT(error_of(path), Catch::Contains("got a single value"));
    path = write_file("empty.json", "");
    CHECK_THAT(error_of(path), Catch::StartsWith(path + ": byte "));
  }
  SECTION("a missing file") {
    const auto path = measured_temp_path("does_not_exist.json");
    CHECK(error_of(path) == path + ": no such file");
  }
  SECTION("a FIFO with no writer is refused, not waited on") {
    const auto path = measured_temp_path("fifo.json");
    std::filesystem::remove(path);
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    CHECK_THAT(error_of(path), Catch::Contains(path + ": is a FIFO (named pipe), not a regular file"));
    std::filesystem::remove(path);
  }
  SECTION("gzip with trailing garbage") {
    std::ifstream in(testdata("mi250-rocm-minitoy.json.gz"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto path = write_file("trailing.json.gz", bytes + "garbage");
    CHECK_THAT(error_of(path), Catch::Contains("trailing garbage"));
  }
  SECTION("times and sizes out of range") {
    const auto kernel = [](const std::string& fields) {
      return R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", )" + fields + "}]}";
    };
    auto path = write_file("neg_dur.json", kernel(R"("ts": 1, "dur": -5)"));
    CHECK(error_of(path) == path + ": traceEvents[0].dur: must be a duration in [0, 1e12] microseconds");
    path = write_file("huge_dur.json", kernel(R"("ts": 1, "dur": 1e308)"));
    CHECK_THAT(error_of(path), Catch::Contains("traceEvents[0].dur: must be a duration"));
    path = write_file("huge_ts.json", kernel(R"("ts": 1e300, "dur": 1)"));
    CHECK_THAT(error_of(path), Catch::Contains("traceEvents[0].ts: must be a time in [-1e17, 1e17]"));
    path = write_file("inf_ts.json", kernel(R"("ts": 1e999, "dur": 1)"));
    CHECK_THAT(error_of(path), Catch::Contains("not valid JSON"));
    path =
        write_file("huge_msg.json", kernel(R"("ts": 1, "dur": 1, "args": {"dtype": "Float", "In msg nelems": 1e308})"));
    CHECK_THAT(error_of(path), Catch::Contains("traceEvents[0].args.In msg nelems: must be a count of elements"));
  }
  SECTION("more events than the limit") {
    const auto path = write_file("many.json", R"({"traceEvents": [{"ph": "M"}, {"ph": "M"}, {"ph": "M"}]})");
    ::setenv("EXASIM_MAX_EVENTS", "2", 1);
    const auto what = error_of(path);
    ::unsetenv("EXASIM_MAX_EVENTS");
    CHECK(what == path +
                      ": more than 2 events, the most exasim reads from one trace (set EXASIM_MAX_EVENTS to raise "
                      "the limit)");
  }
  SECTION("more decompressed bytes than the limit") {
    ::setenv("EXASIM_MAX_INPUT_BYTES", "1000", 1);
    const auto what = error_of(testdata("mi250-rocm-minitoy.json.gz"));
    ::unsetenv("EXASIM_MAX_INPUT_BYTES");
    CHECK_THAT(what, Catch::Contains("larger than 1000 bytes once decompressed"));
  }
}

TEST_CASE("a trace.csv of many one-row ranks reads in linear time", "[unit]") {
  std::string text = "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s\n";
  constexpr int kRanks = 200000;  // every rank scanning every row: 4e10 steps, minutes
  for (int r = 0; r < kRanks; ++r) text += std::to_string(r) + ",a,gemm,,1,1,0,1e-3\n";
  const auto path = write_file("many_ranks.csv", text);
  const auto start = std::chrono::steady_clock::now();
  const auto traces = read_measured(path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(traces.size() == static_cast<std::size_t>(kRanks));
  CHECK(seconds < 20);
}

// PyTorch 1.8-1.10 wrote capitalised categories and ProfilerStep as an operator; such a trace reads alike.
TEST_CASE("older Kineto categories (Kernel, Memcpy, Runtime, Operator) read as the current ones", "[unit]") {
  const auto path = write_file("old_categories.json", R"({"traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "ProfilerStep#7", "ts": 0, "dur": 100},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 2, "args": {"correlation": 3}},
    {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "ts": 150, "dur": 20, "args": {"correlation": 3}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH", "ts": 200, "dur": 4}
  ]})");
  const auto s = summarize(read_kineto(path));
  CHECK(s.kernels == 1);
  CHECK(s.classes[static_cast<std::size_t>(KernelClass::Gemm)] == Approx(20e-6));
  CHECK(s.copies == 1);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].name == "ProfilerStep#7");
  CHECK(s.steps[0].kernels == 1);  // launched at 10 (correlation 3), inside the step, though it ran at 150
}
