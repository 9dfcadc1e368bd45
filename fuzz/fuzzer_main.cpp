// One libFuzzer target (scripts/fuzz.sh builds one binary per target, naming it in EXASIM_FUZZ_TARGET).
#include "fuzz/fuzz_targets.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  exasim::fuzz::run_target(EXASIM_FUZZ_TARGET, {reinterpret_cast<const char*>(data), size});
  return 0;
}
