#include "sim/core/fast_divisor.hpp"

#include <catch2/catch.hpp>

#include <cstdint>

TEST_CASE("the fast divisor agrees with / and % for every divisor shape", "[unit]") {
  for (std::uint32_t d : {1u, 2u, 3u, 7u, 16u, 31u, 32u, 72u, 74u, 1000u, 65537u, 0x7fffffffu, 0xffffffffu}) {
    const exasim::FastDivisor f(d);
    for (std::uint32_t x :
         {0u, 1u, 2u, 31u, 32u, 33u, 1023u, 65536u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu}) {
      CHECK(f.div(x) == x / d);
      CHECK(f.mod(x) == x % d);
    }
    for (std::uint32_t x = 0; x < 5000; ++x) {
      REQUIRE(f.div(x * 2654435761u) == (x * 2654435761u) / d);
      REQUIRE(f.mod(x * 2654435761u) == (x * 2654435761u) % d);
    }
    for (std::uint64_t x : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{0xffffffff}, std::uint64_t{1} << 32,
                            ~std::uint64_t{0}, ~std::uint64_t{0} - 1, std::uint64_t{1} << 63})
      CHECK(f.mod64(x) == x % d);
    std::uint64_t x = 1;
    for (int i = 0; i < 5000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;  // 64-bit values of every size
      REQUIRE(f.mod64(x) == x % d);
      REQUIRE(f.mod64(x >> (i % 64)) == (x >> (i % 64)) % d);
    }
  }
}
