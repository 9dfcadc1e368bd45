#include "emu/emulation_options.hpp"

#include "sim/core/error.hpp"

#include <catch2/catch.hpp>

using namespace exasim;

TEST_CASE("emulated buffers are whole floats divisible by the group", "[unit]") {
  CHECK(emu::emulated_bytes(64 * 1024, 4) == 64 * 1024);
  CHECK(emu::emulated_elements(100, 3) == 24);  // 100 B / 4 / 3 = 8.33 -> 8 floats per member
  CHECK(emu::emulated_elements(1, 4) == 4);     // at least one float per member
  // Idempotent: the simulator and the emulator round a scaled size the same way.
  CHECK(emu::emulated_bytes(emu::emulated_bytes(12345.0, 8), 8) == emu::emulated_bytes(12345.0, 8));
}

TEST_CASE("emulation options are range-checked and round-trip to arguments", "[unit]") {
  emu::EmulationOptions o;
  o.bytes_scale = 2;
  CHECK_THROWS_WITH(emu::validate_options(o), Catch::Contains("--bytes-scale"));
  o.bytes_scale = 0.5;
  o.compute = emu::parse_compute_mode("spin");
  CHECK_NOTHROW(emu::validate_options(o));
  auto args = o.to_args();
  REQUIRE(args.size() == 16);
  CHECK(args[5] == "spin");
  CHECK(args[15] == "ring");
  CHECK_THROWS_AS(emu::parse_compute_mode("gpu"), InputError);
  CHECK(emu::parse_collective_algorithm("mpi") == emu::CollectiveAlgorithm::Mpi);
  CHECK(emu::parse_collective_algorithm("ring") == emu::CollectiveAlgorithm::Ring);
  CHECK_THROWS_AS(emu::parse_collective_algorithm("tree"), InputError);
}
