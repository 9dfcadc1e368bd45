#include "sim/core/data_dir.hpp"

#include <algorithm>
#include <cstdlib>

namespace exasim {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("EXASIM_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return EXASIM_DATA_DIR_DEFAULT;
}

std::filesystem::path find_preset(const std::string& folder, const std::string& name) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name, ec)) return name;
  auto candidate = data_dir() / folder / (name + ".json");
  if (name.find('/') == std::string::npos && std::filesystem::is_regular_file(candidate, ec)) return candidate;
  return {};
}

std::vector<std::string> preset_names(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() / folder, ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace exasim
