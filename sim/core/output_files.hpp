#pragma once
// The files a command writes into an output directory (`simulate --out`), never half-written: each is
// written under a temporary name in the same directory and renamed into place only once every file of
// the set is written, so a run that fails or is interrupted leaves no file that looks complete (at
// worst a stale `.NAME.partial` that the next run overwrites). Problems are InputErrors on `flag`
// naming the path: the directory cannot be made, a target is a directory, a write fails.
//
// LIMITATIONS: the renames are one per file, not one for the set: a crash between two renames leaves
// some files of the new run beside older ones of a previous run.

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace exasim {

class OutputFiles {
 public:
  /// Creates `dir` and checks that none of `names` is taken by a directory, before any work is done.
  OutputFiles(std::string flag, std::filesystem::path dir, std::vector<std::string> names);
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  /// Removes the temporary files of a set that was not committed.
  ~OutputFiles();

  /// Writes `name` (one of the names given) by calling `write` on a temporary path.
  void stage(const std::string& name, const std::function<void(const std::string& path)>& write);
  /// Writes `name` with `text` as its content.
  void stage_text(const std::string& name, const std::string& text);
  /// Renames every staged file into place; returns their names in the order staged.
  std::vector<std::string> commit();

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

 private:
  [[nodiscard]] std::filesystem::path temporary(const std::string& name) const;
  std::string flag_;
  std::filesystem::path dir_;
  std::vector<std::string> names_;
  std::vector<std::string> staged_;
};

}  // namespace exasim
