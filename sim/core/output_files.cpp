#include "sim/core/output_files.hpp"

#include "sim/core/error.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace exasim {

namespace {

constexpr const char* kLockName = ".exasim.lock";

std::atomic<unsigned> g_next_set{0};

}  // namespace

void write_stream_checked(const std::string& path, const std::function<void(std::ostream& out)>& write) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot open " + path + " for writing: " + std::strerror(errno));
  errno = 0;
  write(out);
  int e = errno;  // a failed write of a large piece shows here
  const bool written = static_cast<bool>(out);
  out.close();  // flushes: a full disk shows here if not before
  if (written && !out) e = errno;
  if (!written || !out)
    throw std::runtime_error("error while writing " + path + (e != 0 ? ": " + std::string(std::strerror(e)) : ""));
}

OutputFiles::OutputFiles(std::string flag, std::filesystem::path dir, std::vector<std::string> names)
    : flag_(std::move(flag)), dir_(std::move(dir)), names_(std::move(names)) {
  if (dir_.empty()) throw InputError(flag_, "", "needs a directory name (got an empty string)");
  std::error_code ec;
  // The directories this set makes, outermost first, to remove again if it is never committed.
  for (auto p = dir_; !p.empty() && !std::filesystem::exists(std::filesystem::symlink_status(p, ec));
       p = p.parent_path()) {
    created_.insert(created_.begin(), p);
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_, ec))
    throw InputError(flag_, dir_.string(), "cannot create directory" + (ec ? ": " + ec.message() : std::string()));
  for (const auto& name : names_) check_target(name);
  unique_ = "." + std::to_string(::getpid()) + "." + std::to_string(g_next_set++);
  const auto lock = (dir_ / kLockName).string();
  // Retried when the lock file was replaced between open and flock (a finishing run removes it).
  for (int attempt = 0; attempt < 100 && lock_fd_ < 0; ++attempt) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
      throw InputError(flag_, dir_.string(), std::string("cannot write into the directory: ") + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      throw InputError(flag_, dir_.string(),
                       "another exasim run is writing into this directory (it holds " + lock +
                           "); wait for it to finish or choose another directory");
    }
    struct stat held {
    }, now{};
    if (::fstat(fd, &held) == 0 && ::stat(lock.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      lock_fd_ = fd;
    } else {
      ::close(fd);
    }
  }
  if (lock_fd_ < 0) throw InputError(flag_, lock, "cannot take the directory's lock");
}

void OutputFiles::check_target(const std::string& name) const {
  const auto target = dir_ / name;
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) return;  // absent: nothing to replace
  if (S_ISDIR(st.st_mode))
    throw InputError(flag_, target.string(), "is a directory; cannot write the file " + name + " there");
  if (!S_ISREG(st.st_mode))
    throw InputError(flag_, target.string(),
                     std::string("is ") + (S_ISLNK(st.st_mode) ? "a symbolic link" : "a device or special file") +
                         ", not a regular file; exasim writes only regular files (give a plain file name)");
}

OutputFiles::~OutputFiles() {
  std::error_code ec;  // best effort: a destructor must not throw
  for (const auto& name : staged_) std::filesystem::remove(temporary(name), ec);
  if (lock_fd_ >= 0) {
    std::filesystem::remove(dir_ / kLockName, ec);  // while still held: see the retry in the constructor
    ::close(lock_fd_);
  }
  if (!committed_)
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) std::filesystem::remove(*it, ec);  // if empty
}

std::filesystem::path OutputFiles::temporary(const std::string& name) const {
  return dir_ / ("." + name + unique_ + ".partial");
}

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

void OutputFiles::stage_stream(const std::string& name, const std::function<void(std::ostream& out)>& write) {
  stage(name, [&](const std::string& path) { write_stream_checked(path, write); });
}

void OutputFiles::stage_text(const std::string& name, const std::string& text) {
  stage_stream(name, [&](std::ostream& out) { out << text; });
}

std::vector<std::string> OutputFiles::commit() {
  std::vector<std::string> done;
  for (const auto& name : staged_) check_target(name);  // a device or link put there during the run
  for (const auto& name : staged_) {
    std::error_code ec;
    std::filesystem::rename(temporary(name), dir_ / name, ec);
    if (ec) throw InputError(flag_, (dir_ / name).string(), "cannot write: " + ec.message());
    done.push_back(name);
  }
  staged_.clear();
  committed_ = true;
  return done;
}

void write_output_file(const std::string& flag, const std::filesystem::path& file, const std::string& text) {
  if (file.empty() || !file.has_filename()) throw InputError(flag, file.string(), "must name a file");
  OutputFiles files(flag, file.has_parent_path() ? file.parent_path() : std::filesystem::path("."),
                    {file.filename().string()});
  files.stage_text(file.filename().string(), text);
  files.commit();
}

}  // namespace exasim
