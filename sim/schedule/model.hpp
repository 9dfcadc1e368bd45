#pragma once
// The shape of a GPT-style decoder-only transformer, as the plans and the FLOP formulas need it.

#include <cstdint>
#include <string>

namespace exasim {
class JsonView;
}

namespace exasim::schedule {

struct ModelSpec {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t seq_len = 0;
  std::int64_t vocab = 0;

  /// 12*L*H^2 + V*H: transformer weights plus the (tied) embedding; biases and norms left out.
  [[nodiscard]] double parameters() const;
};

/// Reads a model object; every field must be a positive integer and hidden divisible by heads.
[[nodiscard]] ModelSpec load_model_spec(const JsonView& view);

}  // namespace exasim::schedule
