#pragma once
// Validated access to one JSON object of an input file. Every getter checks type and range and throws an
// InputError naming the file, the dotted field path and what is allowed, so every loader reports bad
// input the same way.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exasim {

class JsonView {
 public:
  /// `source`: file the object came from; `path`: dotted path of the object ("" for the root).
  JsonView(const nlohmann::json& object, std::string source, std::string path);

  [[nodiscard]] const nlohmann::json& json() const { return object_; }
  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  /// Dotted path of a field of this object ("model.layers").
  [[nodiscard]] std::string field(std::string_view key) const;

  [[nodiscard]] bool has(std::string_view key) const;
  /// Rejects keys outside `allowed` (typos would otherwise be silently ignored).
  void check_keys(std::initializer_list<std::string_view> allowed) const;

  [[nodiscard]] JsonView object(std::string_view key) const;
  [[nodiscard]] std::string string(std::string_view key) const;
  [[nodiscard]] std::string string_or(std::string_view key, const std::string& fallback) const;
  /// One of `allowed`; the error lists them.
  [[nodiscard]] std::string choice(std::string_view key, std::initializer_list<std::string_view> allowed,
                                   std::optional<std::string> fallback = std::nullopt) const;
  [[nodiscard]] bool boolean_or(std::string_view key, bool fallback) const;
  [[nodiscard]] std::int64_t integer(std::string_view key, std::int64_t min = 1,
                                     std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  [[nodiscard]] std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min = 1,
                                        std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  /// A whole number in [0, 2^64 - 1] (seeds: every 64-bit value is a valid one).
  [[nodiscard]] std::uint64_t unsigned_integer_or(std::string_view key, std::uint64_t fallback) const;
  /// A finite number in [min, max]; `min_exclusive` makes the lower bound strict (for "> 0").
  [[nodiscard]] double number(std::string_view key, double min, double max, bool min_exclusive = true) const;
  [[nodiscard]] double number_or(std::string_view key, double fallback, double min, double max,
                                 bool min_exclusive = true) const;

  [[noreturn]] void fail(std::string_view key, const std::string& what) const;

 private:
  [[nodiscard]] const nlohmann::json& at(std::string_view key) const;

  const nlohmann::json& object_;
  std::string source_;
  std::string path_;
};

/// One `--set path=value` override: the dotted path split at dots, and the value parsed as JSON (a bare
/// word that is not JSON, such as a preset name, is taken as a string).
struct FieldAssignment {
  std::string path;                ///< as given, for messages
  std::vector<std::string> parts;  ///< path split at dots
  nlohmann::json value;
};

/// Parses "a.b.c=value"; InputError("--set", text, ...) when there is no "path=".
[[nodiscard]] FieldAssignment parse_assignment(const std::string& text);

/// Sets the field in `doc`; every object on the path must already exist. InputError("--set", path, ...)
/// names the first part that is not an object of `document_name` ("the scenario").
void assign_field(nlohmann::json& doc, const FieldAssignment& assignment, const std::string& document_name);

/// Deepest nesting of objects and arrays any input may have (our deepest field is 4 levels down).
inline constexpr int kMaxJsonDepth = 64;

/// Parses JSON text (comments allowed); malformed JSON, a number out of range or nesting deeper than
/// kMaxJsonDepth is an InputError naming `source` and `field`.
[[nodiscard]] nlohmann::json parse_json_text(const std::string& text, const std::string& source,
                                             const std::string& field);

/// Reads and parses a JSON file (a UTF-8 byte order mark and // or /* */ comments are accepted); malformed JSON or a
/// missing file is an InputError naming the file.
[[nodiscard]] nlohmann::json read_json_file(const std::string& path);
/// The whole of an input file (gunzipped if gzip), at most InputLimits::max_document_bytes; InputError
/// naming the file for anything but a regular file (not `kind`, e.g. "a placement file": a directory, a
/// FIFO, /dev/zero), an unreadable file or a larger one.
[[nodiscard]] std::string read_input_text(const std::string& path, const std::string& kind);

}  // namespace exasim
