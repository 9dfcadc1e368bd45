#include "sim/cli/roofline.hpp"

#include "sim/cli/command.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/devices.hpp"
#include "sim/gpu/kernel.hpp"
#include "sim/gpu/shape_aware_gpu.hpp"

#include <charconv>
#include <cmath>
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

std::string family_names() {
  std::string names;
  for (int f = 0; f < gpu::kMemoryFamilies; ++f)
    names += (names.empty() ? "" : ", ") + std::string(gpu::to_string(static_cast<gpu::MemoryFamily>(f)));
  return names;
}
}  // namespace

nlohmann::ordered_json roofline(const std::string& device, const std::string& gemm, const std::string& layout,
                                const std::string& dtype, std::int64_t batch) {
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
  const auto type = gpu::parse_dtype(dtype);
  if (!type) throw InputError("--dtype", dtype, "expected bf16, fp16, fp32 or fp8");
  if (*type == gpu::DType::Fp8 && !spec.has_fp8())
    throw InputError(
        "--dtype", dtype,
        "device '" + spec.name + "' has no FP8 tensor cores (devices with FP8: " + gpu::fp8_device_names() + ")");
  if (batch <= 0) throw InputError("--batch", std::to_string(batch), "expected a positive number of GEMMs");
  gpu::GemmLayout l = layout == "nt" ? gpu::GemmLayout::NT : layout == "tn" ? gpu::GemmLayout::TN : gpu::GemmLayout::NN;
  gpu::ShapeAwareGpu model(spec);
  const auto kernel = gpu::batched_gemm(batch, dims[0], dims[1], dims[2], l, *type);
  auto e = model.estimate_gemm(kernel);
  const double peak = spec.peak_flops(*type);
  return {{"gpu", spec.name},
          {"m", dims[0]},
          {"n", dims[1]},
          {"k", dims[2]},
          {"batch", batch},
          {"dtype", dtype},
          {"layout", layout},
          {"time_s", e.time_s},
          {"tflops", kernel.flops / e.time_s / 1e12},
          {"peak_tflops", peak / 1e12},
          {"percent_of_peak", 100 * kernel.flops / e.time_s / peak},
          {"bound", e.memory_bound() ? "memory" : "compute"},
          {"tiles", e.tiles},
          {"waves", e.waves},
          {"compute_s", e.compute_s},
          {"memory_s", e.memory_s}};
}

nlohmann::ordered_json roofline_memory(const std::string& device, const std::string& memory) {
  const auto& spec = gpu::require_device(device, "--gpu", device);
  const auto comma = memory.find(',');
  const std::string name = memory.substr(0, comma);
  const auto family = gpu::parse_memory_family(name);
  if (!family)
    throw InputError("--memory", memory, "unknown kernel family '" + name + "' (expected " + family_names() + ")");
  const std::string text = comma == std::string::npos ? "" : memory.substr(comma + 1);
  double bytes = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(bytes > 0) || !std::isfinite(bytes))
    throw InputError("--memory", memory, "expected FAMILY,BYTES with BYTES a positive number (got '" + text + "')");
  gpu::ShapeAwareGpu model(spec);
  const double time = model.time_s(gpu::memory_kernel(*family, bytes));
  const double peak_Bps = spec.hbm_bandwidth_Bps.value;
  return {{"gpu", spec.name},
          {"family", name},
          {"bytes", bytes},
          {"time_s", time},
          {"GBps", bytes / time / 1e9},
          {"percent_of_hbm_peak", 100 * bytes / time / peak_Bps},
          {"efficiency", spec.efficiency(*family).value},
          {"efficiency_source", spec.efficiency(*family).source}};
}

}  // namespace exasim::cli

namespace exasim::cli {

Command add_roofline_command(CLI::App& app) {
  struct Options {
    std::string gpu, gemm, memory, layout = "nn", dtype = "bf16";
    std::int64_t batch = 1;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("roofline", "Time of one GEMM or memory-bound kernel on a GPU (shape-aware model)");
  cmd->add_option("--gpu", o->gpu, "Device (see `exasim presets`)")->required();
  auto* gemm = cmd->add_option("--gemm", o->gemm, "Shape M,N,K of an M x K by K x N GEMM");
  auto* memory = cmd->add_option("--memory", o->memory,
                                 "A memory-bound kernel FAMILY,BYTES (family: elementwise, norm, softmax, dropout, "
                                 "activation, optimizer; bytes read + written)");
  gemm->excludes(memory);
  auto* layout = cmd->add_option("--layout", o->layout,
                                 "BLAS operand layout (sim/gpu/kernel.hpp): tn = B column-major (forward X.W^T), nt = "
                                 "A column-major (dY^T.X)")
                     ->check(CLI::IsMember({"nn", "nt", "tn"}))
                     ->capture_default_str();
  auto* dtype = cmd->add_option("--dtype", o->dtype, "GEMM element type (selects the device's peak)")
                    ->check(CLI::IsMember({"bf16", "fp16", "fp32", "fp8"}))
                    ->capture_default_str();
  auto* batch = cmd->add_option("--batch", o->batch, "GEMMs of this shape in one batched launch (torch.bmm)")
                    ->capture_default_str();
  for (auto* gemm_only : {layout, dtype, batch}) memory->excludes(gemm_only);
  cmd->add_flag("--json", o->json, "Print one JSON object");
  return {cmd, [o](std::ostream& out, std::ostream&) {
            if (o->gemm.empty() && o->memory.empty())
              throw InputError("roofline", "",
                               "give a GEMM (--gemm M,N,K) or a memory-bound kernel (--memory FAMILY,BYTES)");
            char buf[320];
            if (!o->memory.empty()) {
              auto r = roofline_memory(o->gpu, o->memory);
              if (o->json) {
                out << r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
                return 0;
              }
              std::snprintf(buf, sizeof buf,
                            "%s %s kernel of %.4g bytes: %.4g s, %.1f GB/s, %.1f%% of HBM peak (efficiency %.2f)\n",
                            r["gpu"].get<std::string>().c_str(), r["family"].get<std::string>().c_str(),
                            r["bytes"].get<double>(), r["time_s"].get<double>(), r["GBps"].get<double>(),
                            r["percent_of_hbm_peak"].get<double>(), r["efficiency"].get<double>());
              out << buf;
              return 0;
            }
            auto r = roofline(o->gpu, o->gemm, o->layout, o->dtype, o->batch);
            if (o->json) {
              out << r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
              return 0;
            }
            // Batch and dtype are named only when they differ from the defaults, so the common case reads
            // as before.
            const std::string batch_text = o->batch == 1 ? "" : std::to_string(o->batch) + " x ";
            const std::string dtype_text = o->dtype == "bf16" ? "" : ", " + o->dtype;
            std::snprintf(buf, sizeof buf,
                          "%s GEMM %s%lldx%lldx%lld (%s%s): %.4g s, %.1f TFLOP/s, %.1f%% of peak, %s bound (%lld tiles "
                          "in %lld waves)\n",
                          r["gpu"].get<std::string>().c_str(), batch_text.c_str(),
                          static_cast<long long>(r["m"].get<std::int64_t>()),
                          static_cast<long long>(r["n"].get<std::int64_t>()),
                          static_cast<long long>(r["k"].get<std::int64_t>()), o->layout.c_str(), dtype_text.c_str(),
                          r["time_s"].get<double>(), r["tflops"].get<double>(), r["percent_of_peak"].get<double>(),
                          r["bound"].get<std::string>().c_str(), static_cast<long long>(r["tiles"].get<std::int64_t>()),
                          static_cast<long long>(r["waves"].get<std::int64_t>()));
            out << buf;
            return 0;
          }};
}

}  // namespace exasim::cli
