#pragma once
// The files a command writes (`simulate --out DIR`, `report --out FILE`, `topo --export`...), never
// half-written: each is written under a temporary name in the same directory and renamed into place
// only once every file of the set is written, so a run that fails, is killed or meets a full disk leaves
// no file that looks complete. Every write, flush and close is checked (a full disk is an error, not a
// file of 0 bytes).
//
// Two runs into one directory at once would interleave their files: a run holds DIR/.exasim.lock
// (flock) from the check to the commit, and a second run is refused while the first holds it.
// Temporary names carry the process id and a counter, so even unlocked writers never share one.
// A rename replaces only a regular file (or nothing): `--out /dev/null` or a link such as /dev/stdout
// would be replaced by a file, so such a target is refused before any work. A directory the set had to
// create is removed again when the set is not committed (bad input found after the check), if empty.
//
// Problems are InputErrors on `flag` naming the path: the directory cannot be made, a target is not a
// regular file, another run holds the lock, a write fails.
//
// LIMITATIONS: the renames are one per file, not one for the set: a crash between two renames leaves
// some files of the new run beside older ones of a previous run. The lock is advisory (flock): it keeps
// exasim runs apart, not other programs, and may not hold on network filesystems.

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace exasim {

class OutputFiles {
 public:
  /// Creates `dir`, takes its lock and checks that each of `names` is absent or a regular file, before
  /// any work is done.
  OutputFiles(std::string flag, std::filesystem::path dir, std::vector<std::string> names);
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  /// Removes the temporary files of a set that was not committed (and the directories it created).
  ~OutputFiles();

  /// Writes `name` (one of the names given) by calling `write` on a temporary path; `write` must throw
  /// when it cannot write the whole file.
  void stage(const std::string& name, const std::function<void(const std::string& path)>& write);
  /// Writes `name` by calling `write` on a stream, whose every error is then reported.
  void stage_stream(const std::string& name, const std::function<void(std::ostream& out)>& write);
  /// Writes `name` with `text` as its content.
  void stage_text(const std::string& name, const std::string& text);
  /// Renames every staged file into place; returns their names in the order staged.
  std::vector<std::string> commit();

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

 private:
  [[nodiscard]] std::filesystem::path temporary(const std::string& name) const;
  void check_target(const std::string& name) const;
  std::string flag_;
  std::filesystem::path dir_;
  std::vector<std::string> names_;
  std::vector<std::string> staged_;
  std::vector<std::filesystem::path> created_;  ///< directories made by the constructor, outermost first
  std::string unique_;                          ///< ".PID.N" in the temporary names
  int lock_fd_ = -1;
  bool committed_ = false;
};

/// One file written as OutputFiles writes a set: into a temporary beside it, then renamed into place.
void write_output_file(const std::string& flag, const std::filesystem::path& file, const std::string& text);

/// Opens `path` for writing, calls `write` on the stream and closes it, throwing std::runtime_error
/// naming the path and errno's reason when any of it fails (a full disk, EFBIG past `ulimit -f`).
void write_stream_checked(const std::string& path, const std::function<void(std::ostream& out)>& write);

}  // namespace exasim
