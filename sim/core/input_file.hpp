#pragma once
// Opening an input file without trusting it. Every reader of a user-named file goes through here, so a
// path that is a FIFO, a device or a directory is refused before it is opened (opening a FIFO with no
// writer blocks forever; /dev/zero never ends), and what a file may unpack to is bounded: a small gzip
// can inflate to gigabytes and a trace can hold millions of events, each costing memory.
//
// The bounds are InputLimits: the decompressed bytes a file may hold and the events (trace rows, Kineto
// events) it may list. Their defaults fit the largest real traces we know with room to spare; the
// environment variables EXASIM_MAX_INPUT_BYTES and EXASIM_MAX_EVENTS raise (or lower) them, and every
// refusal names the limit and the variable.
//
// LIMITATIONS: the regular-file check and the open are two steps, so a file swapped for a FIFO between
// them is not caught by it; InputFileBuf checks the opened file itself. Only gzip is understood as
// compression; any other compressed file reads as its raw bytes.

#include <cstdint>
#include <memory>
#include <streambuf>
#include <string>

namespace exasim {

struct InputLimits {
  std::uint64_t max_bytes = std::uint64_t{512} << 20;  ///< decompressed bytes of one file
  std::uint64_t max_events = 4'000'000;                ///< events or rows of one trace
  /// A JSON or CSV document read whole (a scenario, a placement, a table): its text and its parsed form
  /// are both in memory, so a tighter bound. Our largest preset is 5 kB, a placement of 2^20 GPUs 8 MB.
  std::uint64_t max_document_bytes = std::uint64_t{64} << 20;
};

/// The limits in force: the defaults, or EXASIM_MAX_INPUT_BYTES (both byte bounds) / EXASIM_MAX_EVENTS
/// when set (a positive whole number; anything else is an InputError naming the variable).
[[nodiscard]] InputLimits input_limits();

/// InputError(path, "", ...) unless `path` names a regular file (after following links): missing, a
/// directory, a FIFO, a socket or a device are each refused in words. `kind` says what was expected
/// ("a trace", "a scenario file").
void require_regular_file(const std::string& path, const std::string& kind);

/// InputError naming `path`, the limit and EXASIM_MAX_EVENTS: the file lists more than `limit` events.
[[noreturn]] void too_many_events(const std::string& path, std::uint64_t limit);

/// A regular file's bytes, gunzipped when they start with the gzip magic (concatenated members are one
/// stream; anything after the last member is refused), never more than `max_bytes` of them. Errors are
/// InputErrors on `path`.
class InputFileBuf : public std::streambuf {
 public:
  InputFileBuf(const std::string& path, const std::string& kind, std::uint64_t max_bytes);
  ~InputFileBuf() override;
  InputFileBuf(const InputFileBuf&) = delete;
  InputFileBuf& operator=(const InputFileBuf&) = delete;

 protected:
  int_type underflow() override;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The whole of a regular file as text (gunzipped if gzip), at most `max_bytes`.
[[nodiscard]] std::string read_bounded_file(const std::string& path, const std::string& kind, std::uint64_t max_bytes);

}  // namespace exasim
