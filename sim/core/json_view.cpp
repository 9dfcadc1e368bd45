#include "sim/core/json_view.hpp"

#include "sim/core/error.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

namespace exasim {

namespace {
std::string join(std::initializer_list<std::string_view> items) {
  std::string out;
  for (auto item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::string shown(const nlohmann::json& value) {
  std::string s = value.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}
}  // namespace

JsonView::JsonView(const nlohmann::json& object, std::string source, std::string path)
    : object_(object), source_(std::move(source)), path_(std::move(path)) {
  if (!object_.is_object()) {
    throw InputError(source_, path_, "must be a JSON object (got " + shown(object_) + ")");
  }
}

std::string JsonView::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool JsonView::has(std::string_view key) const { return object_.contains(std::string(key)); }

void JsonView::fail(std::string_view key, const std::string& what) const {
  throw InputError(source_, field(key), what);
}

const nlohmann::json& JsonView::at(std::string_view key) const {
  auto it = object_.find(std::string(key));
  if (it == object_.end()) fail(key, "missing required field");
  return *it;
}

void JsonView::check_keys(std::initializer_list<std::string_view> allowed) const {
  for (const auto& [key, value] : object_.items()) {
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (!known) fail(key, "unknown field (allowed: " + join(allowed) + ")");
  }
}

JsonView JsonView::object(std::string_view key) const {
  const auto& value = at(key);
  if (!value.is_object()) fail(key, "must be a JSON object (got " + shown(value) + ")");
  return JsonView(value, source_, field(key));
}

std::string JsonView::string(std::string_view key) const {
  const auto& value = at(key);
  if (!value.is_string()) fail(key, "must be a string (got " + shown(value) + ")");
  return value.get<std::string>();
}

std::string JsonView::string_or(std::string_view key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

std::string JsonView::choice(std::string_view key, std::initializer_list<std::string_view> allowed,
                             std::optional<std::string> fallback) const {
  if (!has(key) && fallback) return *fallback;
  std::string value = string(key);
  for (auto a : allowed)
    if (value == a) return value;
  fail(key, "'" + value + "' is not one of: " + join(allowed));
}

bool JsonView::boolean_or(std::string_view key, bool fallback) const {
  if (!has(key)) return fallback;
  const auto& value = at(key);
  if (!value.is_boolean()) fail(key, "must be true or false (got " + shown(value) + ")");
  return value.get<bool>();
}

std::int64_t JsonView::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  const auto& value = at(key);
  bool integral = value.is_number_integer() ||
                  (value.is_number_float() && std::isfinite(value.get<double>()) &&
                   std::floor(value.get<double>()) == value.get<double>() && std::abs(value.get<double>()) < 9e15);
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive, GCC bug 105329) on
  // "[" + std::string&&, which inlines to an overlapping memcpy it cannot rule out.
  std::string range = "[";
  range += std::to_string(min);
  range += ", ";
  range += max == std::numeric_limits<std::int64_t>::max() ? std::string("inf") : std::to_string(max);
  range += "]";
  if (!integral) fail(key, "must be an integer in " + range + " (got " + shown(value) + ")");
  std::int64_t v =
      value.is_number_integer() ? value.get<std::int64_t>() : static_cast<std::int64_t>(value.get<double>());
  if (v < min || v > max) fail(key, "must be an integer in " + range + " (got " + std::to_string(v) + ")");
  return v;
}

std::int64_t JsonView::integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                                  std::int64_t max) const {
  return has(key) ? integer(key, min, max) : fallback;
}

double JsonView::number(std::string_view key, double min, double max, bool min_exclusive) const {
  const auto& value = at(key);
  std::ostringstream range;
  range << (min_exclusive ? "(" : "[") << min << ", " << max << "]";
  if (!value.is_number() || !std::isfinite(value.get<double>()))
    fail(key, "must be a finite number in " + range.str() + " (got " + shown(value) + ")");
  double v = value.get<double>();
  if (v < min || (min_exclusive && v == min) || v > max)
    fail(key, "must be a number in " + range.str() + " (got " + shown(value) + ")");
  return v;
}

double JsonView::number_or(std::string_view key, double fallback, double min, double max, bool min_exclusive) const {
  return has(key) ? number(key, min, max, min_exclusive) : fallback;
}

FieldAssignment parse_assignment(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", text, "expected path=value, for example model.layers=48");
  FieldAssignment a;
  a.path = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  try {
    a.value = nlohmann::json::parse(value);
  } catch (const nlohmann::json::parse_error&) {
    a.value = value;  // a bare word such as a preset name
  }
  for (std::size_t start = 0;;) {
    const auto dot = a.path.find('.', start);
    a.parts.push_back(a.path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return a;
}

void assign_field(nlohmann::json& doc, const FieldAssignment& a, const std::string& document_name) {
  nlohmann::json* node = &doc;
  for (std::size_t i = 0; i + 1 < a.parts.size(); ++i) {
    // A missing optional section (`collectives`, `overlap`...) is created: the loader's check_keys
    // still rejects a misspelt one, naming the allowed keys.
    if (node->is_object() && !node->contains(a.parts[i])) (*node)[a.parts[i]] = nlohmann::json::object();
    if (!node->is_object() || !(*node)[a.parts[i]].is_object())
      throw InputError("--set", a.path, "'" + a.parts[i] + "' is not an object in " + document_name);
    node = &(*node)[a.parts[i]];
  }
  if (!node->is_object() || a.parts.back().empty()) throw InputError("--set", a.path, "not a field path");
  (*node)[a.parts.back()] = a.value;
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot open file");
  try {
    return nlohmann::json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, "", std::string("malformed JSON: ") + e.what());
  }
}

}  // namespace exasim
