#include "sim/core/json_view.hpp"

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
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
  // `replace`: a string from --set may hold bytes that are not UTF-8; the message must still print.
  std::string s = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    fail(key, "must be an integer in " + range + " (got " + shown(value) + ")");  // beyond int64: no wrap to < 0
  std::int64_t v =
      value.is_number_integer() ? value.get<std::int64_t>() : static_cast<std::int64_t>(value.get<double>());
  if (v < min || v > max) fail(key, "must be an integer in " + range + " (got " + std::to_string(v) + ")");
  return v;
}

std::uint64_t JsonView::unsigned_integer_or(std::string_view key, std::uint64_t fallback) const {
  if (!has(key)) return fallback;
  const auto& value = at(key);
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)  // a document built in code: signed
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  const double d = value.is_number() ? value.get<double>() : -1;
  if (!value.is_number_float() || !(d >= 0 && d < 9e15 && std::floor(d) == d))
    fail(key, "must be an integer in [0, 18446744073709551615] (got " + shown(value) + ")");
  return static_cast<std::uint64_t>(d);
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

namespace {
bool valid_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();  // dump() checks the encoding of strings
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

/// nlohmann's parser is iterative, but dumping (error messages, outputs) recurses once per level: the
/// limit keeps a deeply nested value from exhausting the stack anywhere later. A key given twice in one
/// object is refused: the parser would silently keep the last value, and a scenario edited by hand
/// (a "layers" added below an old one) would simulate something other than what its author reads.
/// Throws nlohmann's exceptions for malformed text, an InputError for nesting or a repeated key.
nlohmann::json parse_limited(const std::string& text, const std::string& source, const std::string& field) {
  struct Level {
    std::set<std::string> keys;
    std::string last;  ///< the key whose value is being read, for the path in messages
  };
  std::vector<Level> objects;
  const auto path_to = [&objects, &field](const std::string& key) {
    std::string path = field;
    for (std::size_t i = 0; i + 1 < objects.size(); ++i) path += (path.empty() ? "" : ".") + objects[i].last;
    return path + (path.empty() ? "" : ".") + key;
  };
  const auto check = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth) {
      throw InputError(source, field,
                       "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels of objects and arrays");
    }
    if (event == Event::object_start) objects.emplace_back();
    if (event == Event::object_end && !objects.empty()) objects.pop_back();
    if (event == Event::key && !objects.empty()) {
      const std::string key = parsed.get<std::string>();
      if (!objects.back().keys.insert(key).second)
        throw InputError(source, path_to(key), "given twice in one object (JSON keys must be unique)");
      objects.back().last = key;
    }
    return true;
  };
  return nlohmann::json::parse(text, check, /*allow_exceptions=*/true, /*ignore_comments=*/true);
}
}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& source, const std::string& field) {
  try {
    return parse_limited(text, source, field);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(source, field, std::string("malformed JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // out_of_range 406: a number such as 1e999
    throw InputError(source, field, std::string("unreadable JSON: ") + e.what());
  }
}

FieldAssignment parse_assignment(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", text, "expected path=value, for example model.layers=48");
  FieldAssignment a;
  a.path = text.substr(0, eq);
  if (!valid_utf8(text)) {
    // The path as printable text: invalid bytes shown as U+FFFD, without dump()'s quotes.
    std::string shown_path = nlohmann::json(a.path).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    throw InputError("--set", shown_path.substr(1, shown_path.size() - 2),
                     "not valid UTF-8 text (the value and the path must be UTF-8)");
  }
  const std::string value = text.substr(eq + 1);
  try {
    a.value = parse_limited(value, "--set", a.path);
  } catch (const nlohmann::json::parse_error&) {
    a.value = value;                              // a bare word such as a preset name
  } catch (const nlohmann::json::exception& e) {  // out_of_range 406: a number such as 1e999
    throw InputError("--set", a.path, std::string("unreadable value: ") + e.what());
  }
  for (std::size_t start = 0;;) {
    const auto dot = a.path.find('.', start);
    a.parts.push_back(a.path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (a.parts.size() > static_cast<std::size_t>(kMaxJsonDepth))
    throw InputError("--set", a.path.substr(0, 60) + "...", "a path deeper than any field of a scenario");
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

std::string read_input_text(const std::string& path, const std::string& kind) {
  return read_bounded_file(path, kind, input_limits().max_document_bytes);
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_input_text(path, "a JSON file"), path, "");
}

}  // namespace exasim
