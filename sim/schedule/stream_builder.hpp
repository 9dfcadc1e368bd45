#pragma once
// Appends ops to one stream of a plan: deduplicates kernel descriptors and names, and hands out handle
// slots (a slot is free again once its Wait is written). Scheme builders (4D, Megatron) use it so that
// they only say what happens, not how it is stored.

#include "sim/schedule/plan.hpp"

#include <map>
#include <tuple>

namespace exasim::schedule {

using Handle = std::uint16_t;

/// A kernel and the suffix it adds to its op's name ("" for a single-kernel op): what one logical op
/// (standard attention, a residual branch's backward) runs as several kernels.
struct NamedKernel {
  std::string suffix;
  gpu::Kernel kernel;
};

class StreamBuilder {
 public:
  StreamBuilder(Plan& plan, OpStream& stream) : plan_(plan), stream_(stream) {}

  void set_phase(Phase phase) { phase_ = phase; }
  void compute(const std::string& name, const gpu::Kernel& kernel);
  /// One compute op per kernel, named `name` + its suffix, in order.
  void compute(const std::string& name, const std::vector<NamedKernel>& kernels);
  /// Posts a collective; returns its handle. Groups of one member get no op at all (kNoHandle). `peer` is
  /// the partner's offset along `dim` for Send/Recv (Op::peer); the Wait of the handle carries it too.
  [[nodiscard]] Handle start(const std::string& name, CollKind kind, std::uint8_t dim, double bytes,
                             std::int16_t peer = 0);
  void wait(Handle handle);
  /// A blocking collective: start then wait.
  void collective(const std::string& name, CollKind kind, std::uint8_t dim, double bytes);

  static constexpr Handle kNoHandle = 0xffff;

 private:
  std::uint32_t intern_name(const std::string& name);
  std::uint32_t intern_kernel(const gpu::Kernel& kernel);

  Plan& plan_;
  OpStream& stream_;
  Phase phase_ = Phase::Forward;
  std::vector<Handle> free_slots_;
  std::vector<Op> pending_;  ///< per slot: the CollStart whose handle it holds
  std::map<std::string, std::uint32_t> name_ids_;
  /// (kind, flops, bytes, m, n, k, batch, layout | dtype << 4 | family << 8) -> kernel index
  std::map<std::tuple<int, double, double, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>, std::uint32_t>
      kernel_ids_;
};

}  // namespace exasim::schedule
