#pragma once
// The measurements `exasim-emu --microbench` takes on a host, as data: what `exasim calibrate` fits a
// machine file to. No MPI here, so the fitting (validate/) and its tests do not need MPI.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace exasim::emu {

/// One microbenchmark point: the median time of one operation.
struct Sample {
  std::string kind;          ///< pingpong | exchange | all_reduce | all_gather | reduce_scatter | kernel
  std::uint32_t group = 2;   ///< members per group (2 for point-to-point)
  std::uint32_t groups = 1;  ///< groups running at the same time (disjoint ranks)
  double bytes = 0;          ///< collective: full buffer S; pingpong/exchange: one message
  double time_s = 0;         ///< pingpong: one way; kernel: one op; others: post to completion on the slowest rank
  double op_s = 0;           ///< kernel: the op's modelled duration (every rank runs back-to-back ops of it)
};

struct Microbench {
  std::string host;
  std::uint32_t ranks = 0;
  double poll_interval_s = 0;
  std::vector<Sample> samples;
};

[[nodiscard]] nlohmann::json to_json(const Microbench& m);
/// Reads what to_json wrote; InputError naming `source` and the field otherwise.
[[nodiscard]] Microbench microbench_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace exasim::emu
