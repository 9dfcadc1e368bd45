#include "sim/cli/roofline.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/devices.hpp"
#include "sim/gpu/kernel.hpp"
#include "sim/gpu/shape_aware_gpu.hpp"

#include <charconv>

namespace exasim::cli {

namespace {
std::int64_t parse_dim(const std::string& text, const std::string& whole) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v <= 0 || v > (std::int64_t{1} << 32))
    throw InputError("--gemm", whole, "expected three positive integers M,N,K (got '" + text + "')");
  return v;
}
}  // namespace

nlohmann::ordered_json roofline(const std::string& device, const std::string& gemm, const std::string& layout) {
  const auto& spec = gpu::require_device(device, "--gpu", device);
  std::vector<std::int64_t> dims;
  std::size_t start = 0;
  while (true) {
    auto comma = gemm.find(',', start);
    dims.push_back(parse_dim(gemm.substr(start, comma == std::string::npos ? std::string::npos : comma - start), gemm));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (dims.size() != 3) throw InputError("--gemm", gemm, "expected M,N,K (three numbers)");
  gpu::GemmLayout l = layout == "nt" ? gpu::GemmLayout::NT : layout == "tn" ? gpu::GemmLayout::TN : gpu::GemmLayout::NN;
  gpu::ShapeAwareGpu model(spec);
  auto e = model.estimate_gemm(dims[0], dims[1], dims[2], l);
  const double flops = gpu::gemm(dims[0], dims[1], dims[2]).flops;
  const double peak = model.spec().peak_bf16_flops;
  return {{"gpu", spec.name},
          {"m", dims[0]},
          {"n", dims[1]},
          {"k", dims[2]},
          {"layout", layout},
          {"time_s", e.time_s},
          {"tflops", flops / e.time_s / 1e12},
          {"percent_of_peak", 100 * flops / e.time_s / peak},
          {"bound", e.memory_bound() ? "memory" : "compute"},
          {"tiles", e.tiles},
          {"waves", e.waves},
          {"compute_s", e.compute_s},
          {"memory_s", e.memory_s}};
}

}  // namespace exasim::cli
