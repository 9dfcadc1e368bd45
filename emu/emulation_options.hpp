#pragma once
// How exasim-emu emulates a job on real MPI processes: shared by the emulator (which obeys the options)
// and by `exasim emulate/validate` (which pass them on the mpirun command line and simulate the same
// scaled job). No MPI here.

#include "sim/scenario/prepared_job.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace exasim::emu {

/// What a compute op does on the emulated GPU for the GPU model's time:
///  - Sleep: sleep (the default; leaves the cores to the MPI copies of other ranks);
///  - Spin: busy-wait (keeps a core, as a GPU-driving host thread would);
///  - Cpu: real single-precision GEMM tiles on the CPU until the time is up (needs a core per rank).
enum class ComputeMode : std::uint8_t { Sleep, Spin, Cpu };

/// How collectives run (the name "ring" predates collectives.algorithm and is kept for the command line):
///  - Ring: the scenario's collectives.algorithm over MPI_Isend/MPI_Irecv (emu/collectives/), the
///    algorithms of NCCL/RCCL and of the simulator; ring all-reduces are MPI_Iallreduce (Open MPI's
///    ring), ring all-gathers / reduce-scatters exasim's rings, so one calibrated step latency describes
///    every kind (the default);
///  - Mpi: MPI_Iallreduce / MPI_Iallgather / MPI_Ireduce_scatter_block for every collective, whatever
///    algorithm the MPI library picks (Open MPI's libnbc: one-round exchanges), to compare with the MPI
///    library itself; collectives.algorithm is then ignored.
enum class CollectiveAlgorithm : std::uint8_t { Ring, Mpi };

struct EmulationOptions {
  double time_scale = 1;   ///< compute time = GPU model time * time_scale
  double bytes_scale = 1;  ///< collective buffers = plan bytes * bytes_scale (rounded, see emulated_bytes)
  ComputeMode compute = ComputeMode::Sleep;
  CollectiveAlgorithm collectives = CollectiveAlgorithm::Ring;
  std::uint32_t iterations = 3;    ///< measured iterations (the median one is reported)
  std::uint32_t warmup = 1;        ///< iterations run first and thrown away (buffers, MPI connections)
  double poll_interval_s = 50e-6;  ///< how often outstanding collectives are tested while computing or waiting
  double timeout_s = 300;          ///< a rank blocked this long aborts the whole run with an error

  /// The same options as exasim-emu command-line arguments.
  [[nodiscard]] std::vector<std::string> to_args() const;
};

[[nodiscard]] std::string to_string(ComputeMode mode);
/// "sleep" | "spin" | "cpu"; InputError naming `--compute` otherwise.
[[nodiscard]] ComputeMode parse_compute_mode(const std::string& text);
[[nodiscard]] std::string to_string(CollectiveAlgorithm algorithm);
/// "ring" | "mpi"; InputError naming `--collectives` otherwise.
[[nodiscard]] CollectiveAlgorithm parse_collective_algorithm(const std::string& text);

/// Bytes the emulator really moves for a collective buffer of `bytes` over `p` members: a whole number
/// of 4-byte floats, divisible by p (so that all-gather and reduce-scatter blocks are equal), at least p.
[[nodiscard]] double emulated_bytes(double bytes, std::uint32_t p);
/// Number of floats of that buffer.
[[nodiscard]] std::size_t emulated_elements(double bytes, std::uint32_t p);

/// Scales a prepared job the way the emulator runs it: kernel times by time_scale, collective sizes by
/// bytes_scale (then rounded by emulated_bytes). The simulator runs this same job in `exasim validate`.
void apply_emulation_scales(scenario::PreparedJob& job, const EmulationOptions& options);

/// Checks ranges; InputError naming the option otherwise.
void validate_options(const EmulationOptions& options);

}  // namespace exasim::emu
