#pragma once
// The exasim command, callable in-process so that tests can check exit codes and messages.
// Exit codes: 0 success, 2 bad input (file, field and what is allowed are named on stderr), 1 a bug.

#include <iosfwd>
#include <string>
#include <vector>

namespace exasim::cli {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace exasim::cli
