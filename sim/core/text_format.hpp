#pragma once
// Number formatting shared by the text outputs (summaries, trace reports).

#include <cstdio>
#include <string>

namespace exasim {

/// `v` with `decimals` digits after the point ("%.*f").
[[nodiscard]] inline std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace exasim
