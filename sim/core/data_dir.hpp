#pragma once
// Where exasim finds its shipped presets: $EXASIM_DATA_DIR if set, else the source tree it was built from.

#include <filesystem>
#include <string>
#include <vector>

namespace exasim {

[[nodiscard]] std::filesystem::path data_dir();

/// Resolves a preset reference: an existing file path wins; otherwise `name` is looked up as
/// `<data_dir>/<folder>/<name>.json`. Returns an empty path when neither exists.
[[nodiscard]] std::filesystem::path find_preset(const std::string& folder, const std::string& name);

/// Names of the presets in `<data_dir>/<folder>` (sorted), for error messages and listings.
[[nodiscard]] std::vector<std::string> preset_names(const std::string& folder);

}  // namespace exasim
