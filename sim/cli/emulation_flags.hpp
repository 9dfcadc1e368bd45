#pragma once
// The exasim-emu options that `exasim emulate` and `exasim validate` both pass on.

#include "emu/emulation_options.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace exasim::cli {

struct EmulationFlags {
  emu::EmulationOptions options;
  std::string compute = "sleep";
  std::string collectives = "ring";
  double poll_us = 50;

  /// The parsed options (InputError on a bad --compute).
  [[nodiscard]] emu::EmulationOptions resolve() const {
    auto o = options;
    o.compute = emu::parse_compute_mode(compute);
    o.collectives = emu::parse_collective_algorithm(collectives);
    o.poll_interval_s = poll_us * 1e-6;
    return o;
  }
};

inline void add_emulation_flags(CLI::App* cmd, EmulationFlags& f) {
  cmd->add_option("--time-scale", f.options.time_scale, "Compute time = GPU model time x this")->capture_default_str();
  cmd->add_option("--bytes-scale", f.options.bytes_scale, "Collective buffers = plan bytes x this (<= 1)")
      ->capture_default_str();
  cmd->add_option("--compute", f.compute, "Emulated GPU: sleep | spin | cpu (real GEMM tiles, a core per rank)")
      ->capture_default_str();
  cmd->add_option("--collectives", f.collectives,
                  "ring: the scenario's collectives.algorithm over point-to-point messages, as NCCL (all-reduce rings:"
                  " libnbc's) | mpi: the MPI library's own algorithm for every collective")
      ->capture_default_str();
  cmd->add_option("--iterations", f.options.iterations, "Measured iterations (median reported)")->capture_default_str();
  cmd->add_option("--warmup", f.options.warmup, "Iterations run first and discarded")->capture_default_str();
  cmd->add_option("--poll-us", f.poll_us, "Test outstanding collectives every this many microseconds")
      ->capture_default_str();
}

}  // namespace exasim::cli
