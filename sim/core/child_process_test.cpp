#include "sim/core/child_process.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <vector>

using namespace exasim;

TEST_CASE("a child process returns its bytes, large ones included", "[unit]") {
  ChildProcess small([] { return std::string("abc\0def", 7); });
  CHECK(small.get() == std::string("abc\0def", 7));
  // Larger than a pipe's buffer: the parent must read while the child writes.
  ChildProcess large([] { return std::string(5 << 20, 'x'); });
  const auto got = large.get();
  CHECK(got.size() == (5u << 20));
  CHECK(got.find_first_not_of('x') == std::string::npos);
  CHECK(large.peak_rss_bytes() > 0);
}

TEST_CASE("a child process throws the child's InputError again, as the same error", "[unit]") {
  ChildProcess call([]() -> std::string { throw InputError("job.json", "model.layers", "must be positive"); });
  try {
    (void)call.get();
    FAIL("no exception");
  } catch (const InputError& e) {
    CHECK(e.source() == "job.json");
    CHECK(e.field() == "model.layers");
    CHECK(std::string(e.what()) == "job.json: model.layers: must be positive");
  }
  ChildProcess whole_file([]() -> std::string { throw InputError("job.json", "", "not JSON"); });
  CHECK_THROWS_WITH(whole_file.get(), "job.json: not JSON");
}

TEST_CASE("a child process keeps the family of other errors and reports a child that died", "[unit]") {
  ChildProcess logic([]() -> std::string { throw std::logic_error("deadlock: rank 3 stuck"); });
  CHECK_THROWS_AS(logic.get(), std::logic_error);
  ChildProcess argument([]() -> std::string { throw std::invalid_argument("plan needs 16 GPUs"); });
  CHECK_THROWS_AS(argument.get(), std::invalid_argument);
  ChildProcess other([]() -> std::string { throw std::runtime_error("disk full"); });
  CHECK_THROWS_WITH(other.get(), "disk full");
  ChildProcess killed([]() -> std::string {
    std::raise(SIGKILL);
    return {};
  });
  CHECK_THROWS_WITH(killed.get(), Catch::Contains("signal 9"));
  ChildProcess twice([] { return std::string("1"); });
  CHECK(twice.get() == "1");
  CHECK_THROWS_AS(twice.get(), std::logic_error);
}

TEST_CASE("a child process says when it is ready, without blocking", "[unit]") {
  int go[2];
  REQUIRE(::pipe(go) == 0);
  ChildProcess waiting([&] {
    char c = 0;
    (void)::read(go[0], &c, 1);  // blocks until the parent writes
    return std::string("done");
  });
  CHECK_FALSE(waiting.ready());
  REQUIRE(::write(go[1], "g", 1) == 1);
  while (!waiting.ready()) ::usleep(1000);
  CHECK(waiting.get() == "done");
  ::close(go[0]);
  ::close(go[1]);
}

TEST_CASE("a child process whose result is never asked for is stopped", "[unit]") {
  // The destructor kills and reaps the child: this returns at once rather than after the child's work.
  {
    ChildProcess idle([]() -> std::string {
      for (;;) pause();
    });
  }
  CHECK(available_cpus() >= 1);
}

TEST_CASE("a child's environment failures and non-UTF-8 messages cross as themselves", "[unit]") {
  ChildProcess oom([]() -> std::string { throw std::bad_alloc(); });
  CHECK_THROWS_AS(oom.get(), exasim::EnvironmentError);
  ChildProcess env([]() -> std::string { throw exasim::EnvironmentError("cannot start a worker process"); });
  CHECK_THROWS_WITH(env.get(), "cannot start a worker process");
  // A file name that is not UTF-8 in an InputError: the JSON of the message must still be written.
  ChildProcess bytes([]() -> std::string { throw InputError("trace_\xff.json", "", "no such file"); });
  CHECK_THROWS_AS(bytes.get(), InputError);
}
