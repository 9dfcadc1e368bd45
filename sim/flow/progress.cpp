#include "sim/flow/fast_runtime.hpp"

#include <unistd.h>  // isatty

#include <cstdio>

namespace exasim::flow {

ProgressCallback terminal_progress_bar() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](const Progress& p) {
    constexpr int kWidth = 40;
    const int filled = static_cast<int>(p.fraction * kWidth + 0.5);
    char bar[kWidth + 1];
    for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
    bar[kWidth] = '\0';
    // \r redraws the same line; the final report ends it.
    std::fprintf(stderr, "\rsimulating [%s] %3.0f%%  %.3f s simulated, %.0f s wall%s", bar, 100 * p.fraction,
                 p.simulated_s, p.wall_s, p.final ? "\n" : "");
    std::fflush(stderr);
  };
}

}  // namespace exasim::flow
