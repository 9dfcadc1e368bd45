#include "sim/core/json_view.hpp"
#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

using exasim::InputError;
using exasim::JsonView;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("JsonView names file, field and range in every error", "[unit]") {
  auto doc = nlohmann::json::parse(R"({"model": {"layers": -3, "name": 7, "rate": 0}, "ok": 4})");
  JsonView root(doc, "s.json", "");
  auto model = root.object("model");
  CHECK(error_of([&] { (void)model.integer("layers"); }) ==
        "s.json: model.layers: must be an integer in [1, inf] (got -3)");
  CHECK(error_of([&] { (void)model.string("name"); }) == "s.json: model.name: must be a string (got 7)");
  CHECK(error_of([&] { (void)model.integer("heads"); }) == "s.json: model.heads: missing required field");
  CHECK(error_of([&] { (void)model.number("rate", 0, 1); }).find("model.rate: must be a number in (0, 1]") !=
        std::string::npos);
  CHECK(error_of([&] { root.check_keys({"model"}); }) == "s.json: ok: unknown field (allowed: model)");
  CHECK(root.integer("ok") == 4);
}

TEST_CASE("read_json_file reports malformed JSON and missing files", "[unit]") {
  CHECK_THROWS_AS(exasim::read_json_file("/nonexistent/x.json"), InputError);
}

TEST_CASE("read_json_file refuses devices and names a directory", "[unit]") {
  // /dev/zero never ends: the reader must refuse it, not grow until memory runs out.
  CHECK_THROWS_WITH(exasim::read_json_file("/dev/zero"), Catch::Contains("/dev/zero: is a device or special file"));
  CHECK_THROWS_WITH(exasim::read_json_file("/"), Catch::Contains("/: is a directory, not a JSON file"));
}

TEST_CASE("a key given twice in one object is refused, with its path", "[unit]") {
  CHECK(error_of([] { (void)exasim::parse_json_text(R"({"gpus": 8, "name": "a", "gpus": 16})", "s.json", ""); }) ==
        "s.json: gpus: given twice in one object (JSON keys must be unique)");
  CHECK(error_of([] {
          (void)exasim::parse_json_text(R"({"machine": {"network": {"routing": "minimal", "routing": "adaptive"}}})",
                                        "s.json", "");
        }) == "s.json: machine.network.routing: given twice in one object (JSON keys must be unique)");
  // The same key in two objects, or in sibling objects of an array, is fine.
  CHECK_NOTHROW(exasim::parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})", "s.json", ""));
  CHECK(error_of([] { (void)exasim::parse_assignment(R"(model={"layers": 2, "layers": 3})"); }) ==
        "--set: model.layers: given twice in one object (JSON keys must be unique)");
}

TEST_CASE("seeds take every 64-bit value, and integers beyond int64 are refused, not wrapped", "[unit]") {
  auto doc = nlohmann::json::parse(
      R"({"seed": 18446744073709551615, "small": 7.0, "neg": -1, "layers": 18446744073709551615})");
  JsonView root(doc, "s.json", "");
  CHECK(root.unsigned_integer_or("seed", 1) == 18446744073709551615ull);
  CHECK(root.unsigned_integer_or("small", 1) == 7);
  CHECK(root.unsigned_integer_or("absent", 5) == 5);
  nlohmann::json built = {{"seed", 3}};  // signed, as code builds it
  CHECK(JsonView(built, "built", "").unsigned_integer_or("seed", 1) == 3);
  CHECK(error_of([&] { (void)root.unsigned_integer_or("neg", 1); }) ==
        "s.json: neg: must be an integer in [0, 18446744073709551615] (got -1)");
  CHECK(error_of([&] { (void)root.integer("layers", 1, 10000); }) ==
        "s.json: layers: must be an integer in [1, 10000] (got 18446744073709551615)");
}
