#include "sim/schedule/model.hpp"

#include "sim/core/json_view.hpp"

namespace exasim::schedule {

double ModelSpec::parameters() const {
  auto L = static_cast<double>(layers), H = static_cast<double>(hidden), V = static_cast<double>(vocab);
  return 12 * L * H * H + V * H;
}

ModelSpec load_model_spec(const JsonView& v) {
  v.check_keys({"name", "layers", "hidden", "heads", "seq_len", "vocab", "source"});
  ModelSpec m;
  m.name = v.string_or("name", "custom");
  m.layers = v.integer("layers", 1, 100000);
  m.hidden = v.integer("hidden", 1, 1 << 20);
  m.heads = v.integer("heads", 1, 1 << 16);
  m.seq_len = v.integer("seq_len", 1, 1 << 24);
  m.vocab = v.integer("vocab", 1, 1 << 24);
  if (m.hidden % m.heads != 0) {
    v.fail("heads", "must divide hidden (" + std::to_string(m.hidden) + "), got " + std::to_string(m.heads));
  }
  return m;
}

}  // namespace exasim::schedule
