#include "sim/report/summary_views.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace exasim;

namespace {

/// A Summary with a distinct value in every field, so that a field shown in the wrong place shows.
report::Summary sample() {
  report::Summary s;
  s.scenario = "sample";
  s.backend = "fast";
  s.machine = "simple-a100";
  s.gpu = "a100-40gb";
  s.model = "gpt-5b";
  s.parameters = 5.1e9;
  s.gpus = 16;
  s.network = "single_switch";
  s.routing = "minimal";
  s.placement = "packed";
  s.collectives = "tree";
  s.scheme = "megatron";
  s.layout = {{"tp", std::int64_t{4}}, {"pp", std::int64_t{2}}, {"sequence_parallel", true}, {"scatter_gather", false}};
  s.global_batch = 128;
  s.recompute = "selective";
  s.attention = "flash";
  s.dtype = "bf16";
  s.dropout = 0.1;
  s.seed = 7;
  s.iteration_time_s = 2.5;
  s.model_flops = 1e15;
  s.hardware_flops = 1.25e15;
  s.tflops_per_gpu = 31.3;
  s.model_tflops_per_gpu = 25;
  s.peak_tflops_per_gpu = 312;
  s.percent_of_peak = 10.016;
  s.mfu_percent = 8.0128;
  s.total_pflops = 0.5;
  s.compute_s = 2.0;
  s.idle_s = 0.125;
  s.dimensions = {{"tp", 0.25, 3e9, 96}, {"dp", 0.125, 4.5e6, 1}};
  s.memory = {1e9, 2e9, 3e9, 4e9, 5e9};
  s.memory_basis = {"bf16", 4, "selective", "flash", 0.1};
  s.memory_capacity_bytes = 40e9;
  s.events = 1234;
  s.flows = 567;
  s.wall_s = 9.75;
  return s;
}

}  // namespace

TEST_CASE("the JSON view holds every field of the summary under its documented key", "[unit]") {
  const auto s = sample();
  const auto j = report::to_json(s);
  CHECK(j["scenario"] == s.scenario);
  CHECK(j["backend"] == s.backend);
  CHECK(j["machine"] == s.machine);
  CHECK(j["gpu"] == s.gpu);
  CHECK(j["model"] == s.model);
  CHECK(j["parameters"] == s.parameters);
  CHECK(j["gpus"] == s.gpus);
  CHECK(j["network"] == s.network);
  CHECK(j["routing"] == s.routing);
  CHECK(j["placement"] == s.placement);
  CHECK(j["collectives"] == s.collectives);
  CHECK(j["parallel"].dump() ==
        R"({"scheme":"megatron","tp":4,"pp":2,"sequence_parallel":true,"scatter_gather":false})");
  CHECK(j["global_batch"] == s.global_batch);
  CHECK(j["training"].dump() == R"({"recompute":"selective","attention":"flash","dropout":0.1,"dtype":"bf16"})");
  CHECK(j["iteration_time_s"] == s.iteration_time_s);
  CHECK(j["model_flops"] == s.model_flops);
  CHECK(j["hardware_flops"] == s.hardware_flops);
  CHECK(j["tflops_per_gpu"] == s.tflops_per_gpu);
  CHECK(j["model_tflops_per_gpu"] == s.model_tflops_per_gpu);
  CHECK(j["peak_tflops_per_gpu"] == s.peak_tflops_per_gpu);
  CHECK(j["percent_of_peak"] == s.percent_of_peak);
  CHECK(j["mfu_percent"] == s.mfu_percent);
  CHECK(j["total_pflops"] == s.total_pflops);
  CHECK(j["breakdown_s"].dump() ==
        R"({"compute":2.0,"compute_slowed_beside_comm":0.0,"exposed_comm":{"tp":0.25,"dp":0.125},"idle":0.125})");
  CHECK(j["memory_per_gpu_bytes"] == 15e9);
  CHECK(j["memory_breakdown_bytes"].dump() ==
        R"({"weights":1000000000.0,"gradients":2000000000.0,"optimizer":3000000000.0,)"
        R"("activations":4000000000.0,"workspace":5000000000.0})");
  CHECK(j["memory_basis"].dump() ==
        R"({"dtype":"bf16","gradient_bytes":4.0,"recompute":"selective","attention":"flash","dropout":0.1})");
  CHECK(j["memory_capacity_bytes"] == s.memory_capacity_bytes);
  CHECK(j["memory_workspace_bytes"].dump() == R"({"logits":0.0,"buffers":0.0,"runtime":0.0})");
  CHECK(j["memory_largest_term"] == "workspace");
  CHECK(j["memory_over_capacity_bytes"] == 0.0);
  CHECK(j["memory_over_terms"].dump() == "[]");
  CHECK(j["comm_bytes_per_rank"].dump() == R"({"tp":3000000000.0,"dp":4500000.0})");
  CHECK(j["collectives_per_rank"].dump() == R"({"tp":96,"dp":1})");
  CHECK(j["events"] == s.events);
  CHECK(j["flows"] == s.flows);
  CHECK(j["seed"] == s.seed);
  // Wall time would make outputs differ run to run; per-rank figures are for callers, not the view.
  CHECK_FALSE(j.contains("wall_s"));
  CHECK_FALSE(j.contains("compute_by_kernel_s"));
  CHECK(j.size() == 37);
}

TEST_CASE("compute by kernel class is in both views only when the summary has it", "[unit]") {
  auto s = sample();
  std::ostringstream without;
  report::print_summary(without, s);
  CHECK(without.str().find("compute by kernel class") == std::string::npos);

  s.compute_by_kernel = std::vector<report::KernelClassTime>{{"gemm", 1.5}, {"softmax", 0.25}};
  const auto j = report::to_json(s);
  CHECK(j["compute_by_kernel_s"].dump() == R"({"gemm":1.5,"softmax":0.25})");
  CHECK(j.items().begin().key() == "scenario");
  CHECK((--j.end()).key() == "compute_by_kernel_s");  // appended last, as exasim simulate always wrote it
  std::ostringstream with;
  report::print_summary(with, s);
  CHECK(with.str().find("    gemm                       1.5000 s   60.0%\n") != std::string::npos);
}

TEST_CASE("the text view shows the summary's numbers", "[unit]") {
  std::ostringstream out;
  report::print_summary(out, sample());
  const auto text = out.str();
  INFO(text);
  for (const char* expected : {
           "exasim simulate: sample\n",
           "  gpt-5b (5.1B parameters) on 16 x a100-40gb (simple-a100), megatron tp=4 pp=2 sequence_parallel=on "
           "scatter_gather=off, global batch 128\n",
           "  bf16, flash attention, dropout 0.1, recompute selective\n",
           "  network single_switch, routing minimal, placement packed, collectives tree\n",
           "  iteration time   2.5000 s\n",
           "  throughput       31.3 TFLOP/s per GPU, 10.0% of the 312.0 TFLOP/s peak; 0.50 PFLOP/s in total\n",
           "model flops give 25.0 TFLOP/s, MFU 8.0%)\n",
           "    compute                    2.0000 s   80.0%\n",
           "    exposed comm tp            0.2500 s   10.0%\n",
           "    idle (waiting to end)      0.1250 s    5.0%\n",
           "  memory per GPU     15.0 GB of 40.0 GB (weights 1.0, gradients 2.0, optimizer 3.0, activations 4.0, "
           "workspace 5.0)\n",
           "bf16 weights, 4 B gradients, recompute selective, flash attention, dropout 0.10\n",
           // The largest term, workspace, is 5 of the 15 GB; 40 - 15 GB free.
           "                     largest term workspace (33%); 25.0 GB free\n",
           "    tp          3.00 GB in     96 collectives\n",
           "    dp          4.50 MB in      1 collective\n",
           "  simulated 1234 events and 567 flows (fast backend)\n",
       })
    CHECK(text.find(expected) != std::string::npos);
  CHECK(text.find("9.75") == std::string::npos);  // wall time stays out
}

TEST_CASE("a summary over the GPU's memory names the overflow and the terms larger than it", "[unit]") {
  report::Summary s = sample();
  s.memory_capacity_bytes = 11e9;  // 15 GB needed: 4 GB over, which only workspace (5) exceeds
  std::ostringstream out;
  report::print_summary(out, s);
  INFO(out.str());
  CHECK(out.str().find("                     largest term workspace (33%); over by 4.0 GB; larger than that: "
                       "workspace\n") != std::string::npos);
  const auto j = report::to_json(s);
  CHECK(j["memory_over_capacity_bytes"] == 4e9);
  CHECK(j["memory_over_terms"].dump() == R"(["workspace"])");
  s.memory_capacity_bytes = 12.5e9;  // 2.5 GB over: optimizer (3), activations (4), workspace (5)
  std::ostringstream near;
  report::print_summary(near, s);
  CHECK(near.str().find("over by 2.5 GB; larger than that: optimizer, activations, workspace\n") != std::string::npos);
}

TEST_CASE("the text view of an emulation says measured, not simulated", "[unit]") {
  auto s = sample();
  s.backend = "mpi";
  s.events = 0;
  s.flows = 0;
  std::ostringstream out;
  report::print_summary(out, s);
  const auto text = out.str();
  INFO(text);
  CHECK(text.rfind("exasim emulate: sample\n", 0) == 0);
  CHECK(text.find("measured on 16 MPI ranks with emulated GPUs (mpi backend)\n") != std::string::npos);
  CHECK(text.find("simulated 0 events") == std::string::npos);
}
