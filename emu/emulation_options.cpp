#include "emu/emulation_options.hpp"

#include "sim/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace exasim::emu {

namespace {
std::string number(double v) {
  std::ostringstream s;
  s.precision(15);  // 17 would print 50e-6 * 1e6 as 49.999999999999993
  s << v;
  return s.str();
}
}  // namespace

std::vector<std::string> EmulationOptions::to_args() const {
  return {"--time-scale", number(time_scale),     "--bytes-scale", number(bytes_scale),
          "--compute",    to_string(compute),     "--iterations",  std::to_string(iterations),
          "--warmup",     std::to_string(warmup), "--poll-us",     number(poll_interval_s * 1e6),
          "--timeout-s",  number(timeout_s),      "--collectives", to_string(collectives)};
}

std::string to_string(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::Sleep: return "sleep";
    case ComputeMode::Spin: return "spin";
    case ComputeMode::Cpu: return "cpu";
  }
  return "?";
}

ComputeMode parse_compute_mode(const std::string& text) {
  if (text == "sleep") return ComputeMode::Sleep;
  if (text == "spin") return ComputeMode::Spin;
  if (text == "cpu") return ComputeMode::Cpu;
  throw InputError("--compute", text, "unknown compute mode (allowed: sleep, spin, cpu)");
}

std::string to_string(CollectiveAlgorithm algorithm) { return algorithm == CollectiveAlgorithm::Ring ? "ring" : "mpi"; }

CollectiveAlgorithm parse_collective_algorithm(const std::string& text) {
  if (text == "ring") return CollectiveAlgorithm::Ring;
  if (text == "mpi") return CollectiveAlgorithm::Mpi;
  throw InputError("--collectives", text, "unknown collective algorithm (allowed: ring, mpi)");
}

std::size_t emulated_elements(double bytes, std::uint32_t p) {
  const double per_member = std::round(bytes / 4.0 / std::max<std::uint32_t>(p, 1));
  return static_cast<std::size_t>(std::max(1.0, per_member)) * std::max<std::uint32_t>(p, 1);
}

double emulated_bytes(double bytes, std::uint32_t p) { return 4.0 * static_cast<double>(emulated_elements(bytes, p)); }

void apply_emulation_scales(scenario::PreparedJob& prepared, const EmulationOptions& options) {
  for (auto& t : prepared.job.kernel_time_s) t *= options.time_scale;
  const auto& grid = prepared.plan.grid;
  for (auto& stream : prepared.plan.streams) {
    for (auto& op : stream.ops) {
      if (op.type == schedule::OpType::Compute) continue;
      // Send/Recv move the whole buffer to one peer: no division among members.
      const std::uint32_t p = schedule::is_p2p(op.coll) ? 1 : grid.dim(op.dim).size;
      op.bytes = emulated_bytes(op.bytes * options.bytes_scale, p);
    }
  }
}

void validate_options(const EmulationOptions& o) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (!positive(o.time_scale) || o.time_scale > 1e6)
    throw InputError("--time-scale", number(o.time_scale), "must be in (0, 1e6]");
  if (!positive(o.bytes_scale) || o.bytes_scale > 1)
    throw InputError("--bytes-scale", number(o.bytes_scale), "must be in (0, 1] (buffers can only shrink)");
  if (o.iterations < 1 || o.iterations > 1000)
    throw InputError("--iterations", std::to_string(o.iterations), "must be in [1, 1000]");
  if (o.warmup > 1000) throw InputError("--warmup", std::to_string(o.warmup), "must be in [0, 1000]");
  if (!positive(o.poll_interval_s) || o.poll_interval_s > 0.1)
    throw InputError("--poll-us", number(o.poll_interval_s * 1e6), "must be in (0, 100000] microseconds");
  if (!positive(o.timeout_s)) throw InputError("--timeout-s", number(o.timeout_s), "must be > 0");
}

}  // namespace exasim::emu
