#pragma once
// Starts exasim-emu under mpirun for the user: fork + execvp (no shell, so no quoting surprises), in
// its own process group so that a timeout can end every rank; never hangs.
//
// On one host it adds what Open MPI needs there: --oversubscribe when ranks outnumber cores,
// --allow-run-as-root for root, the shared-memory transport (pml ob1, btl self,vader), and the ring
// algorithm for MPI_Iallreduce (what the simulator models). Each is skipped when the user set it (an
// OMPI_MCA_* variable in the environment, or --hostfile for a cluster run).
//
// LIMITATIONS: Open MPI's mpirun flags only (MPICH's mpiexec spells some differently).

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace exasim::validate {

/// The emulation did not complete (a rank died, hung, or mpirun failed); the message says which.
class EmulationFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Launch {
  std::uint32_t ranks = 0;
  std::vector<std::string> emu_args;  ///< arguments of exasim-emu (or of `binary`)
  std::string binary;                 ///< the program to start; empty: exasim-emu (find_emu_binary)
  std::string hostfile;               ///< empty: all ranks on this host
  double timeout_s = 600;             ///< the whole mpirun, start to end
  bool stdout_to_stderr = false;      ///< keep our stdout clean (for --json)
};

/// exasim-emu beside the running exasim binary, or $EXASIM_EMU. InputError when missing.
[[nodiscard]] std::string find_emu_binary();

/// The argv that launch() executes (testable without running it).
[[nodiscard]] std::vector<std::string> mpirun_command(const Launch& launch, const std::string& emu_binary);

/// Runs it; returns when mpirun ended. Exit code 2 of exasim-emu (bad input, already explained on
/// stderr) is returned as 2; any other failure or the timeout throws EmulationFailed.
int launch(const Launch& launch, std::ostream& log);

}  // namespace exasim::validate
