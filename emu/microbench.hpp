#pragma once
// Calibration microbenchmarks, run by `exasim-emu --microbench` on every rank of an mpirun job:
//  - pingpong: one-way time between ranks 0 and 1 vs message size (latency and bandwidth of one copy);
//  - exchange: k rank pairs swapping messages at once (how concurrent copies share cores and memory);
//  - all_reduce / all_gather / reduce_scatter vs buffer size and group size, every rank busy (the world
//    split into groups that all run at once, as the plans do), posted exactly as the emulated plans post
//    them (libnbc's ring all-reduce; collectives/ring_collective.hpp for the others). Their repetitions are
//    interleaved: each round runs every point once, a point's time is its median over 15 rounds (5 with
//    --quick, which measures the same points).
//  - kernel: back-to-back compute ops of 0, 20 us, 200 us and 2 ms on the emulated GPU (sleep mode), every
//    rank at once: what an op costs beyond its modelled time on this host.
// Every wait tests and sleeps exactly as the emulated iterations do (mpi_progress.hpp), so the fitted
// machine describes the path validation measures.
//
// LIMITATIONS: medians of a few repetitions (the whole suite takes seconds): a load that lasts longer
// than a few rounds on a shared host goes straight into the fit; sizes stop at 32 MiB.

#include "emu/microbench_samples.hpp"

namespace exasim::emu {

struct MicrobenchOptions {
  bool quick = false;  ///< fewer repetitions of the same points (tests, validate's probe)
  double poll_interval_s = 50e-6;
  double timeout_s = 120;
};

/// Collective over MPI_COMM_WORLD (at least 2 ranks). The result is complete on rank 0.
[[nodiscard]] Microbench run_microbenchmarks(const MicrobenchOptions& options);

}  // namespace exasim::emu
