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

const char* to_string(AttentionImpl attention) { return attention == AttentionImpl::Standard ? "standard" : "flash"; }

std::optional<Recompute> parse_recompute(std::string_view name) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    if (name == to_string(r)) return r;
  return std::nullopt;
}

std::optional<AttentionImpl> parse_attention(std::string_view name) {
  for (AttentionImpl a : {AttentionImpl::Flash, AttentionImpl::Standard})
    if (name == to_string(a)) return a;
  return std::nullopt;
}

}  // namespace exasim::schedule
