#pragma once
// What the command's tests share (cli_test.cpp, reliability_test.cpp): `exasim ARGS` run in-process, its
// exit code and what it printed, and a small valid scenario to vary.

#include "sim/cli/cli.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace exasim::cli::testing {

struct Outcome {
  int code;
  std::string out, err;
};

inline Outcome exasim_run(std::vector<std::string> args) {
  args.insert(args.begin(), "exasim");
  std::ostringstream out, err;
  int code = exasim::cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

/// 16 A100s of simple-a100, a 2-layer model: simulates in milliseconds.
inline constexpr const char* kGood = R"({"machine": "simple-a100",
  "model": {"layers": 2, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 4096},
  "gpus": 16, "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 2},
  "training": {"global_batch": 16, "recompute": "full"}, "seed": 3})";

}  // namespace exasim::cli::testing
