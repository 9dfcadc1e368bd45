#include "sim/schedule/stream_builder.hpp"

#include <stdexcept>
#include <string>

namespace exasim::schedule {

std::uint32_t StreamBuilder::intern_name(const std::string& name) {
  auto [it, inserted] = name_ids_.try_emplace(name, static_cast<std::uint32_t>(plan_.names.size()));
  if (inserted) plan_.names.push_back(name);
  return it->second;
}

std::uint32_t StreamBuilder::intern_kernel(const gpu::Kernel& k) {
  auto key =
      std::make_tuple(static_cast<int>(k.kind), k.flops, k.bytes, k.m, k.n, k.k, k.batch,
                      static_cast<int>(k.layout) | static_cast<int>(k.dtype) << 4 | static_cast<int>(k.family) << 8);
  auto [it, inserted] = kernel_ids_.try_emplace(key, static_cast<std::uint32_t>(plan_.kernels.size()));
  if (inserted) plan_.kernels.push_back(k);
  return it->second;
}

void StreamBuilder::compute(const std::string& name, const gpu::Kernel& kernel) {
  Op op;
  op.type = OpType::Compute;
  op.phase = phase_;
  op.name = intern_name(name);
  op.kernel = intern_kernel(kernel);
  stream_.ops.push_back(op);
}

void StreamBuilder::compute(const std::string& name, const std::vector<NamedKernel>& kernels) {
  for (const auto& k : kernels) compute(name + k.suffix, k.kernel);
}

Handle StreamBuilder::start(const std::string& name, CollKind kind, std::uint8_t dim, double bytes, std::int16_t peer) {
  if (plan_.grid.dim(dim).size <= 1 || bytes <= 0) return kNoHandle;
  Handle slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    // Handles are 16 bits (Op::slot) and kNoHandle is the last value: a plan holding that many
    // collectives in flight on one rank (axonn4d's backward keeps two per layer) cannot be expressed.
    if (stream_.slots == kNoHandle) {
      throw std::length_error("the plan keeps more than " + std::to_string(kNoHandle) +
                              " collectives in flight on one rank");
    }
    slot = stream_.slots++;
    pending_.emplace_back();
  }
  Op op;
  op.type = OpType::CollStart;
  op.phase = phase_;
  op.coll = kind;
  op.dim = dim;
  op.slot = slot;
  op.name = intern_name(name);
  op.bytes = bytes;
  op.peer = peer;
  pending_[slot] = op;
  stream_.ops.push_back(op);
  return slot;
}

void StreamBuilder::wait(Handle handle) {
  if (handle == kNoHandle) return;
  Op op = pending_.at(handle);  // a Wait carries its collective's name, kind, dimension and bytes
  op.type = OpType::Wait;
  op.phase = phase_;
  stream_.ops.push_back(op);
  free_slots_.push_back(handle);
}

void StreamBuilder::collective(const std::string& name, CollKind kind, std::uint8_t dim, double bytes) {
  wait(start(name, kind, dim, bytes));
}

}  // namespace exasim::schedule
