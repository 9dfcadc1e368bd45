#pragma once
// Where exasim finds its shipped presets: $EXASIM_DATA_DIR if set, else the source tree it was built from.

#include <filesystem>
#include <string>
#include <vector>

namespace exasim {

[[nodiscard]] std::filesystem::path data_dir();

/// Where a path named inside an input file may be, in the order to try: an absolute path is its own
/// only candidate; a relative one is looked for beside the file that names it (`referring_file`'s
/// folder; skipped when it has none), then in the current directory (where exasim looked before, kept
/// so that old command lines still work). Callers append their own last resort (the data dir).
[[nodiscard]] std::vector<std::filesystem::path> input_file_candidates(const std::string& text,
                                                                       const std::string& referring_file);

/// The first candidate that is a regular file, or an empty path.
[[nodiscard]] std::filesystem::path first_file(const std::vector<std::filesystem::path>& candidates);

/// The candidates as "a, b, c" for error messages (the current directory's shown as "./name").
[[nodiscard]] std::string list_candidates(const std::vector<std::filesystem::path>& candidates);

/// Resolves a preset reference named in `referring_file` (empty: on a command line): an existing file
/// (input_file_candidates) wins; otherwise a name without '/' is looked up as
/// `<data_dir>/<folder>/<name>.json` (".json" added where it is missing).
/// Returns an empty path when none exists; `tried` (if given) receives every candidate, in order.
[[nodiscard]] std::filesystem::path find_preset(const std::string& folder, const std::string& name,
                                                const std::string& referring_file = {},
                                                std::vector<std::filesystem::path>* tried = nullptr);

/// Names of the presets in `<data_dir>/<folder>` (sorted), for error messages and listings.
[[nodiscard]] std::vector<std::string> preset_names(const std::string& folder);

}  // namespace exasim
