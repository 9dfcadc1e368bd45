#include "sim/flow/fast_runtime.hpp"

#include <unistd.h>  // isatty

#include <cstdio>
#include <string>

namespace exasim::flow {

namespace {

/// " about 12 s left", once a few percent are done and the estimate means something.
std::string time_left(const Progress& p) {
  if (p.final || p.fraction < 0.02 || p.fraction >= 1) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, ", about %.0f s left", p.wall_s * (1 - p.fraction) / p.fraction);
  return buf;
}

}  // namespace

ProgressCallback progress_display() {
  if (isatty(STDERR_FILENO)) {
    return [](const Progress& p) {
      if (p.final) {  // the run is over: leave no bar behind
        std::fputs("\r\033[K", stderr);
        std::fflush(stderr);
        return;
      }
      constexpr int kWidth = 40;
      const int filled = static_cast<int>(p.fraction * kWidth + 0.5);
      char bar[kWidth + 1];
      for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
      bar[kWidth] = '\0';
      // \r redraws the same line, \033[K clears what a longer line left.
      std::fprintf(stderr, "\rsimulating [%s] %3.0f%%  %.3f s simulated, %.0f s wall%s\033[K", bar, 100 * p.fraction,
                   p.simulated_s, p.wall_s, time_left(p).c_str());
      std::fflush(stderr);
    };
  }
  // A log or a pipe: a plain line every 5 s, so that a long run does not look hung, and none at the end.
  return [next_s = 5.0](const Progress& p) mutable {
    if (p.final || p.wall_s < next_s) return;
    next_s = p.wall_s + 5;
    std::fprintf(stderr, "exasim: simulating, %.0f%% done, %.3f s simulated in %.0f s of wall time%s\n",
                 100 * p.fraction, p.simulated_s, p.wall_s, time_left(p).c_str());
    std::fflush(stderr);
  };
}

}  // namespace exasim::flow
