#include "sim/core/output_files.hpp"

#include "sim/core/error.hpp"

#include <algorithm>
#include <fstream>

namespace exasim {

OutputFiles::OutputFiles(std::string flag, std::filesystem::path dir, std::vector<std::string> names)
    : flag_(std::move(flag)), dir_(std::move(dir)), names_(std::move(names)) {
  if (dir_.empty()) throw InputError(flag_, "", "needs a directory name (got an empty string)");
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_, ec))
    throw InputError(flag_, dir_.string(), "cannot create directory" + (ec ? ": " + ec.message() : std::string()));
  for (const auto& name : names_) {
    if (std::filesystem::is_directory(dir_ / name, ec))
      throw InputError(flag_, (dir_ / name).string(), "is a directory; cannot write the file " + name + " there");
  }
}

OutputFiles::~OutputFiles() {
  std::error_code ec;  // best effort: a destructor must not throw
  for (const auto& name : staged_) std::filesystem::remove(temporary(name), ec);
}

std::filesystem::path OutputFiles::temporary(const std::string& name) const { return dir_ / ("." + name + ".partial"); }

void OutputFiles::stage(const std::string& name, const std::function<void(const std::string& path)>& write) {
  const auto tmp = temporary(name);
  staged_.push_back(name);  // before writing: a failed write's leftovers are removed too
  try {
    write(tmp.string());
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(flag_, (dir_ / name).string(), std::string("cannot write: ") + e.what());
  }
}

void OutputFiles::stage_text(const std::string& name, const std::string& text) {
  stage(name, [&](const std::string& path) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw std::runtime_error("cannot open " + path + " for writing");
    out << text;
    out.close();
    if (!out) throw std::runtime_error("error while writing " + path);
  });
}

std::vector<std::string> OutputFiles::commit() {
  std::vector<std::string> done;
  for (const auto& name : staged_) {
    std::error_code ec;
    std::filesystem::rename(temporary(name), dir_ / name, ec);
    if (ec) throw InputError(flag_, (dir_ / name).string(), "cannot write: " + ec.message());
    done.push_back(name);
  }
  staged_.clear();
  return done;
}

}  // namespace exasim
