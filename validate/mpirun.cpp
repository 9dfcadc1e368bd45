#include "validate/mpirun.hpp"

#include "sim/core/error.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <thread>

namespace exasim::validate {

namespace {
bool env_set(const char* name) { return std::getenv(name) != nullptr; }
}  // namespace

std::string find_emu_binary() {
  if (const char* env = std::getenv("EXASIM_EMU")) {
    if (std::filesystem::exists(env)) return env;
    throw InputError("EXASIM_EMU", env, "no such file");
  }
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  auto candidate = self.parent_path() / "exasim-emu";
  if (!ec && std::filesystem::exists(candidate)) return candidate.string();
  throw InputError(
      "exasim-emu", candidate.string(),
      "not found beside exasim (build it: it needs MPI, e.g. apt install libopenmpi-dev; or set EXASIM_EMU)");
}

std::vector<std::string> mpirun_command(const Launch& l, const std::string& emu_binary) {
  std::vector<std::string> argv = {"mpirun", "-n", std::to_string(l.ranks)};
  if (::geteuid() == 0) argv.emplace_back("--allow-run-as-root");
  if (!l.hostfile.empty()) {
    argv.insert(argv.end(), {"--hostfile", l.hostfile});
  } else {
    const auto cores = std::thread::hardware_concurrency();
    // A rank per core when the cores suffice: pinned, a rank keeps its caches and is never queued behind
    // another rank on one core while a second core idles. Oversubscribed, pinning would tie two ranks to
    // one core for the whole run; unbound, the scheduler spreads the ranks that have work. Left to
    // OMPI_MCA_hwloc_base_binding_policy when the user sets it.
    const bool oversubscribed = cores == 0 || l.ranks > cores;
    if (oversubscribed) argv.push_back("--oversubscribe");
    if (!env_set("OMPI_MCA_hwloc_base_binding_policy"))
      argv.insert(argv.end(), {"--bind-to", oversubscribed ? "none" : "core"});
    if (!env_set("OMPI_MCA_pml")) argv.insert(argv.end(), {"--mca", "pml", "ob1"});
    if (!env_set("OMPI_MCA_btl")) argv.insert(argv.end(), {"--mca", "btl", "self,vader"});
  }
  if (!env_set("OMPI_MCA_coll_libnbc_iallreduce_algorithm"))
    argv.insert(argv.end(), {"--mca", "coll_libnbc_iallreduce_algorithm", "1"});  // 1 = ring
  argv.push_back(emu_binary);
  argv.insert(argv.end(), l.emu_args.begin(), l.emu_args.end());
  return argv;
}

int launch(const Launch& l, std::ostream& log) {
  const auto argv_strings = mpirun_command(l, l.binary.empty() ? find_emu_binary() : l.binary);
  std::vector<char*> argv;
  for (const auto& a : argv_strings) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::string shown;
  for (const auto& a : argv_strings) {
    if (!shown.empty()) shown += ' ';
    shown += a;
  }
  log << "exasim: running " << shown << "\n" << std::flush;

  const pid_t pid = ::fork();
  if (pid < 0) throw EmulationFailed("cannot fork to start mpirun");
  if (pid == 0) {
    ::setpgid(0, 0);  // own process group: the timeout kills mpirun and every rank it started
    if (l.stdout_to_stderr) ::dup2(2, 1);
    ::execvp(argv[0], argv.data());
    _exit(127);
  }
  ::setpgid(pid, pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(l.timeout_s);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGTERM);
      std::this_thread::sleep_for(std::chrono::seconds(2));
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw EmulationFailed("the emulation did not finish within " + std::to_string(l.timeout_s) +
                            " s; all its processes were killed (a rank hung?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == 0 || code == 2) return code;
    if (code == 127) throw EmulationFailed("cannot run mpirun (is Open MPI installed and on PATH?)");
    throw EmulationFailed("mpirun exited with code " + std::to_string(code) +
                          ": a rank failed (see its messages above)");
  }
  throw EmulationFailed("mpirun was killed by signal " + std::to_string(WTERMSIG(status)));
}

}  // namespace exasim::validate
