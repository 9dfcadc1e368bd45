#include "sim/core/data_dir.hpp"

#include "sim/core/error.hpp"

#include <algorithm>
#include <cstdlib>

namespace exasim {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("EXASIM_DATA_DIR"); env != nullptr && *env != '\0') {
    // Presets are looked up under it: a file or a missing folder would only show as "no such preset".
    std::error_code ec;
    if (!std::filesystem::is_directory(env, ec))
      throw InputError("EXASIM_DATA_DIR", env,
                       "must name exasim's source folder (the one holding configs/ and topologies/); unset it "
                       "to use " EXASIM_DATA_DIR_DEFAULT);
    return env;
  }
  return EXASIM_DATA_DIR_DEFAULT;
}

std::vector<std::filesystem::path> input_file_candidates(const std::string& text, const std::string& referring_file) {
  const std::filesystem::path p(text);
  if (p.is_absolute()) return {p};
  std::vector<std::filesystem::path> out;
  const std::filesystem::path folder = std::filesystem::path(referring_file).parent_path();
  if (!referring_file.empty() && !folder.empty()) out.push_back(folder / p);
  out.push_back(p);
  return out;
}

std::filesystem::path first_file(const std::vector<std::filesystem::path>& candidates) {
  std::error_code ec;
  for (const auto& c : candidates)
    if (std::filesystem::is_regular_file(c, ec)) return c;
  return {};
}

std::string list_candidates(const std::vector<std::filesystem::path>& candidates) {
  std::string out;
  for (const auto& c : candidates) {
    out += out.empty() ? "" : ", ";
    out += c.is_relative() && !c.has_parent_path() ? "./" + c.string() : c.string();
  }
  return out;
}

std::filesystem::path find_preset(const std::string& folder, const std::string& name, const std::string& referring_file,
                                  std::vector<std::filesystem::path>* tried) {
  auto candidates = input_file_candidates(name, referring_file);
  if (name.find('/') == std::string::npos) {
    const bool has_extension = std::filesystem::path(name).extension() == ".json";
    candidates.push_back(data_dir() / folder / (has_extension ? name : name + ".json"));
  }
  if (tried != nullptr) *tried = candidates;
  return first_file(candidates);
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
