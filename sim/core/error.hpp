#pragma once
// Errors that reach the user. An InputError is always the user's to fix (a bad scenario, preset, flag
// or file) and the CLI turns it into exit code 2. An EnvironmentError is the machine's refusal of a
// sound request (no process can be forked, memory ran out) and exits 3. Anything else is a bug in
// exasim (exit 1).

#include <stdexcept>  // std::runtime_error
#include <string>

namespace exasim {

class InputError : public std::runtime_error {
 public:
  /// `source` is the file (or "--set", "command line") the bad value came from; `field` the dotted path
  /// of the field in it (may be empty for whole-file problems such as malformed JSON).
  InputError(std::string source, std::string field, const std::string& what)
      : std::runtime_error(format(source, field, what)), source_(std::move(source)), field_(std::move(field)) {}

  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] const std::string& field() const { return field_; }

 private:
  static std::string format(const std::string& source, const std::string& field, const std::string& what) {
    std::string msg = source;
    if (!field.empty()) msg += ": " + field;
    return msg + ": " + what;
  }
  std::string source_;
  std::string field_;
};

class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace exasim
