#include "sim/api/forked_call.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <csignal>
#include <stdexcept>

using namespace exasim;

TEST_CASE("a forked call returns the child's result, doubles bit for bit", "[unit]") {
  const double third = 1.0 / 3.0, tiny = std::nextafter(1.0, 2.0) - 1.0;
  api::ForkedCall call([&] { return nlohmann::json{{"third", third}, {"tiny", tiny}, {"big", 1e300}, {"n", 7}}; });
  const nlohmann::json got = call.get();
  CHECK(got.at("third").get<double>() == third);
  CHECK(got.at("tiny").get<double>() == tiny);
  CHECK(got.at("big").get<double>() == 1e300);
  CHECK(got.at("n").get<int>() == 7);
}

TEST_CASE("a forked call throws the child's InputError again, as the same error", "[unit]") {
  api::ForkedCall call([]() -> nlohmann::json { throw InputError("job.json", "model.layers", "must be positive"); });
  try {
    (void)call.get();
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(e.source() == "job.json");
    CHECK(e.field() == "model.layers");
    CHECK(std::string(e.what()) == "job.json: model.layers: must be positive");
  }
  api::ForkedCall whole_file([]() -> nlohmann::json { throw InputError("job.json", "", "not JSON"); });
  CHECK_THROWS_WITH(whole_file.get(), "job.json: not JSON");
}

TEST_CASE("a forked call reports other errors and a child that died", "[unit]") {
  api::ForkedCall failing([]() -> nlohmann::json { throw std::logic_error("deadlock: rank 3 stuck"); });
  CHECK_THROWS_WITH(failing.get(), "deadlock: rank 3 stuck");
  api::ForkedCall killed([]() -> nlohmann::json {
    std::raise(SIGKILL);
    return {};
  });
  CHECK_THROWS_WITH(killed.get(), Catch::Contains("signal 9"));
  api::ForkedCall twice([] { return nlohmann::json(1); });
  CHECK(twice.get() == 1);
  CHECK_THROWS_AS(twice.get(), std::logic_error);
}

TEST_CASE("a forked call whose result is never asked for is stopped", "[unit]") {
  // The destructor kills and reaps the child: this returns at once rather than after the child's work.
  {
    api::ForkedCall idle([]() -> nlohmann::json {
      for (;;) pause();
    });
  }
  CHECK(api::available_cpus() >= 1);
}
