#include "sim/job/job_config.hpp"

#include "sim/core/error.hpp"
#include "sim/core/json_view.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace exasim;
using namespace exasim::job;

namespace {

const JobContext kContext{/*gpus=*/64, /*gpus_per_node=*/8, /*tokens_per_step=*/1024.0 * 4096, /*seed=*/5};

JobConfig load(const std::string& text) {
  const auto doc = nlohmann::json::parse(text);
  return load_job_config(JsonView(doc, "job.json", "job"), kContext);
}

/// The message of the InputError `text` raises ("" when none).
std::string error_of(const std::string& text) {
  try {
    (void)load(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kFailures = R"("failures": {"restart_s": 600}, "checkpoint": {"write_Bps": 1e11})";

/// `head` (an object's opening and first keys) completed with kFailures. Appends, rather than operator+
/// on literals, which GCC 12 -Wrestrict misreads.
std::string with_failures(const char* head) {
  std::string text(head);
  text.append(", ").append(kFailures).append("}");
  return text;
}

}  // namespace

TEST_CASE("job keys are read and converted", "[unit]") {
  // 10^10 tokens / (1024 x 4096 tokens per step) = 2384.19 steps, rounded up to 2385.
  const auto j = load(with_failures(R"({"tokens": 1e10)"));
  CHECK(j.steps == 2385);
  CHECK(j.steps_from_tokens);
  // The default rate: Llama 3's 419 / (16,384 x 54 x 24) = 1.973e-5 per GPU-hour; 64 GPUs: a job MTBF of
  // 1 / (1.973e-5 x 64) h = 791.9 h.
  CHECK(j.failures_per_gpu_hour == Approx(1.9733e-5).epsilon(1e-3));
  CHECK(j.mtbf_s == Approx(3600 / (kLlama3FailuresPerGpuHour * 64)));
  CHECK(j.straggler_seed == 5);
  // per_node_hour 8e-4 over 8 GPUs a node: 1e-4 per GPU-hour.
  const auto n = load(R"({"steps": 10, "failures": {"per_node_hour": 8e-4, "restart_s": 1},
                          "checkpoint": {"write_Bps": 1e9}})");
  CHECK(n.failures_per_gpu_hour == Approx(1e-4));
  // job_mtbf_hours 2: the job fails every 7200 s.
  const auto m = load(R"({"steps": 10, "failures": {"job_mtbf_hours": 2, "restart_s": 1},
                          "checkpoint": {"write_Bps": 1e9}})");
  CHECK(m.mtbf_s == Approx(7200));
  // A zero rate turns failures off, and then no checkpoint is needed.
  CHECK_FALSE(load(R"({"steps": 10, "failures": {"per_gpu_hour": 0}})").failures());
}

TEST_CASE("bad job keys name the field and what is allowed", "[unit]") {
  CHECK_THAT(error_of(R"({"steps": 10, "failures": {"per_gpu_hour": -1, "restart_s": 1}})"),
             Catch::Contains("job.failures.per_gpu_hour"));
  CHECK_THAT(error_of(with_failures(R"({"steps": 10, "tokens": 1e9)")),
             Catch::Contains("job.steps") && Catch::Contains("not both"));
  CHECK_THAT(error_of(std::string("{").append(kFailures).append("}")),
             Catch::Contains("job.tokens") && Catch::Contains("exactly one"));
  CHECK_THAT(error_of(with_failures(R"({"steps": 10, "stepz": 1)")), Catch::Contains("stepz"));
  CHECK_THAT(error_of(with_failures(R"({"steps": 10, "stragglers": {"fraction": 1.5})")),
             Catch::Contains("job.stragglers.fraction"));
  CHECK_THAT(error_of(with_failures(R"({"steps": 10, "stragglers": {"fraction": 0.1, "slowdown": 0.5})")),
             Catch::Contains("job.stragglers.slowdown"));
  CHECK_THAT(error_of(R"({"steps": 10, "failures": {"per_gpu_hour": 1e-5, "per_node_hour": 1e-4, "restart_s": 1}})"),
             Catch::Contains("at most one"));
  CHECK_THAT(error_of(R"({"steps": 10, "failures": {"per_gpu_hour": 1e-5}})"),
             Catch::Contains("job.failures.restart_s"));
  CHECK_THAT(error_of(R"({"steps": 10, "failures": {"restart_s": 1}})"), Catch::Contains("job.checkpoint"));
  CHECK_THAT(error_of(R"({"steps": 10, "failures": {"restart_s": 1}, "checkpoint": {"mode": "overlapped",
                          "write_Bps": 1e9}})"),
             Catch::Contains("job.checkpoint.snapshot_Bps"));
  CHECK_THAT(error_of(R"({"steps": 10, "failures": {"restart_s": 1}, "checkpoint": {"mode": "async",
                          "write_Bps": 1e9}})"),
             Catch::Contains("job.checkpoint.mode") && Catch::Contains("overlapped"));
  CHECK_THAT(error_of(with_failures(R"({"steps": 10, "pue": 0.5)")), Catch::Contains("job.pue"));
}
