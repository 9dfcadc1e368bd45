#include "sim/cli/roofline.hpp"

#include "sim/cli/command.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/devices.hpp"
#include "sim/gpu/kernel.hpp"
#include "sim/gpu/shape_aware_gpu.hpp"

#include <charconv>
#include <cstdio>
#include <memory>
#include <ostream>

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

namespace exasim::cli {

Command add_roofline_command(CLI::App& app) {
  struct Options {
    std::string gpu, gemm, layout = "nn";
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("roofline", "Time of one bf16 GEMM on a GPU (shape-aware model)");
  cmd->add_option("--gpu", o->gpu, "Device (see `exasim presets`)")->required();
  cmd->add_option("--gemm", o->gemm, "Shape M,N,K of an M x K by K x N GEMM")->required();
  cmd->add_option("--layout", o->layout, "BLAS operand layout (sim/gpu/kernel.hpp): tn = B column-major (forward X.W^T), nt = A column-major (dY^T.X)")->check(CLI::IsMember({"nn", "nt", "tn"}))->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  return {cmd, [o](std::ostream& out, std::ostream&) {
            auto r = roofline(o->gpu, o->gemm, o->layout);
            if (o->json) {
              out << r.dump() << "\n";
              return 0;
            }
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "%s GEMM %lldx%lldx%lld (%s): %.4g s, %.1f TFLOP/s, %.1f%% of peak, %s bound (%lld tiles in %lld waves)\n",
                          r["gpu"].get<std::string>().c_str(), static_cast<long long>(r["m"].get<std::int64_t>()),
                          static_cast<long long>(r["n"].get<std::int64_t>()),
                          static_cast<long long>(r["k"].get<std::int64_t>()), o->layout.c_str(),
                          r["time_s"].get<double>(), r["tflops"].get<double>(), r["percent_of_peak"].get<double>(),
                          r["bound"].get<std::string>().c_str(), static_cast<long long>(r["tiles"].get<std::int64_t>()),
                          static_cast<long long>(r["waves"].get<std::int64_t>()));
            out << buf;
            return 0;
          }};
}

}  // namespace exasim::cli
