#include "sim/core/input_file.hpp"

#include "sim/core/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace exasim {

namespace {

std::uint64_t limit_from_env(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*text < '0' || *text > '9' || *end != '\0' || errno == ERANGE || v == 0)
    throw InputError(name, "", "must be a positive whole number (got '" + std::string(text) + "')");
  return v;
}

// What a non-regular file is, in words, or "" for a regular file.
std::string not_regular(mode_t mode, const std::string& kind) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "is a directory, not " + kind;
  const char* what = S_ISFIFO(mode) ? "a FIFO (named pipe)" : S_ISSOCK(mode) ? "a socket" : "a device or special file";
  return std::string("is ") + what + ", not a regular file: exasim reads " + kind + " only from a regular file";
}

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

InputLimits input_limits() {
  InputLimits l;
  l.max_bytes = limit_from_env("EXASIM_MAX_INPUT_BYTES", l.max_bytes);
  l.max_document_bytes = limit_from_env("EXASIM_MAX_INPUT_BYTES", l.max_document_bytes);
  l.max_events = limit_from_env("EXASIM_MAX_EVENTS", l.max_events);
  return l;
}

void require_regular_file(const std::string& path, const std::string& kind) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    throw InputError(path, "", e == ENOENT ? "no such file" : "cannot read: " + errno_text(e));
  }
  if (const auto why = not_regular(st.st_mode, kind); !why.empty()) throw InputError(path, "", why);
}

void too_many_events(const std::string& path, std::uint64_t limit) {
  throw InputError(path, "",
                   "more than " + std::to_string(limit) +
                       " events, the most exasim reads from one trace (set EXASIM_MAX_EVENTS to raise the limit)");
}

struct InputFileBuf::State {
  std::string path;
  std::uint64_t max_bytes = 0;
  std::uint64_t delivered = 0;
  int fd = -1;
  bool gzip = false;
  bool in_eof = false;
  bool member_done = false;
  bool z_ready = false;
  z_stream z{};
  std::vector<unsigned char> in = std::vector<unsigned char>(1 << 16);
  std::vector<char> out = std::vector<char>(1 << 16);
  std::size_t plain_pending = 0;  ///< bytes of `in` read while sniffing, not yet served (plain files)

  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(path, "", "not a readable (gzip or plain) file: " + why);
  }
  std::size_t read_raw(unsigned char* to, std::size_t n) {
    for (;;) {
      const ssize_t got = ::read(fd, to, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) throw InputError(path, "", "cannot read: " + errno_text(errno));
    }
  }
  void fill() {
    z.next_in = in.data();
    z.avail_in = static_cast<uInt>(read_raw(in.data(), in.size()));
    if (z.avail_in == 0) in_eof = true;
  }
  std::size_t inflate_some() {
    for (;;) {
      if (z.avail_in == 0 && !in_eof) fill();
      if (member_done) {
        if (z.avail_in == 0) return 0;  // a clean end after the last member
        // Another gzip member may follow (concatenated files are one stream); anything else is refused.
        if (*z.next_in != 0x1f) fail("data after the end of the gzip stream (trailing garbage)");
        inflateReset(&z);
        member_done = false;
      }
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      const int rc = inflate(&z, Z_NO_FLUSH);
      const std::size_t produced = out.size() - z.avail_out;
      if (rc == Z_STREAM_END) {
        member_done = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail(z.msg != nullptr ? z.msg : "corrupt gzip data");
      }
      if (produced > 0) return produced;
      if (!member_done && z.avail_in == 0 && in_eof) fail("unexpected end of file (a truncated gzip file?)");
    }
  }
};

InputFileBuf::InputFileBuf(const std::string& path, const std::string& kind, std::uint64_t max_bytes)
    : s_(std::make_unique<State>()) {
  s_->path = path;
  s_->max_bytes = max_bytes;
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of blocking; fstat then refuses it.
  s_->fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (s_->fd < 0) {
    const int e = errno;
    throw InputError(path, "", e == ENOENT ? "no such file" : "cannot open the file: " + errno_text(e));
  }
  struct stat st {};
  if (::fstat(s_->fd, &st) != 0) throw InputError(path, "", "cannot read: " + errno_text(errno));
  if (const auto why = not_regular(st.st_mode, kind); !why.empty()) throw InputError(path, "", why);
  s_->plain_pending = s_->read_raw(s_->in.data(), s_->in.size());
  s_->gzip = s_->plain_pending >= 2 && s_->in[0] == 0x1f && s_->in[1] == 0x8b;
  if (s_->gzip) {
    s_->z.next_in = s_->in.data();
    s_->z.avail_in = static_cast<uInt>(s_->plain_pending);
    s_->plain_pending = 0;
    if (inflateInit2(&s_->z, 16 + MAX_WBITS) != Z_OK) throw InputError(path, "", "cannot start gzip decompression");
    s_->z_ready = true;
  }
}

InputFileBuf::~InputFileBuf() {
  if (s_->z_ready) inflateEnd(&s_->z);
  if (s_->fd >= 0) ::close(s_->fd);
}

InputFileBuf::int_type InputFileBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  State& s = *s_;
  char* data = nullptr;
  std::size_t n = 0;
  if (s.gzip) {
    n = s.inflate_some();
    data = s.out.data();
  } else {
    n = s.plain_pending > 0 ? s.plain_pending : s.read_raw(s.in.data(), s.in.size());
    s.plain_pending = 0;
    data = reinterpret_cast<char*>(s.in.data());
  }
  if (n == 0) return traits_type::eof();
  s.delivered += n;
  if (s.delivered > s.max_bytes)
    throw InputError(s.path, "",
                     "larger than " + std::to_string(s.max_bytes) + " bytes" + (s.gzip ? " once decompressed" : "") +
                         ", the most exasim reads from one file (set EXASIM_MAX_INPUT_BYTES to raise the limit)");
  setg(data, data, data + n);
  return traits_type::to_int_type(*gptr());
}

std::string read_bounded_file(const std::string& path, const std::string& kind, std::uint64_t max_bytes) {
  InputFileBuf buf(path, kind, max_bytes);
  std::string text;
  char piece[1 << 16];
  for (;;) {
    const auto n = buf.sgetn(piece, sizeof piece);
    if (n <= 0) break;
    text.append(piece, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace exasim
