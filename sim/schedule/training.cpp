#include "sim/schedule/training.hpp"

namespace exasim::schedule {

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

const char* to_string(AttentionImpl attention) {
  return attention == AttentionImpl::Standard ? "standard" : "flash";
}

}  // namespace exasim::schedule
