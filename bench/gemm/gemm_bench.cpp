// gemm_bench: time GEMMs and write them as a calibration CSV (sim/gpu/internal/calibration.hpp), printing one JSON
// line per shape with the shape-aware model's prediction beside the measurement.
//
//   gemm_bench --backend host --shapes 512,512,512;1024,1024,1024 --out host.csv
//   gemm_bench --backend cuda --device h100-sxm --scenario configs/scenarios/default.json --out h100.csv
//
// --scenario measures every distinct GEMM of that scenario's plan (the shapes its model and parallel
// configuration really run). The CSV rows carry --device; `exasim` accepts a CSV only for devices it
// knows (exasim presets), so host-CPU rows are for checking the pipeline, not for simulation.

#include "bench/gemm/host_gemm.hpp"
#ifdef EXASIM_HAVE_CUDA
#include "bench/gemm/cuda_gemm.hpp"
#endif
#include "sim/core/error.hpp"
#include "sim/gpu/devices.hpp"
#include "sim/gpu/shape_aware_gpu.hpp"
#include "sim/scenario/prepared_job.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <tuple>

namespace {

using Shape = std::tuple<std::int64_t, std::int64_t, std::int64_t, exasim::gpu::GemmLayout>;

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(';', start);
    std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(item.c_str(), "%lld,%lld,%lld", &m, &n, &k) != 3 || m <= 0 || n <= 0 || k <= 0)
      throw exasim::InputError("--shapes", item, "expected M,N,K with positive integers, shapes separated by ';'");
    shapes.emplace_back(m, n, k, exasim::gpu::GemmLayout::NN);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return shapes;
}

std::vector<Shape> scenario_shapes(const std::string& path) {
  auto prepared = exasim::scenario::prepare_job(exasim::scenario::load_scenario(path));
  std::set<Shape> unique;
  // Single bf16 GEMMs only: the CSV rows this bench writes are bf16 and unbatched, so standard
  // attention's batched GEMMs and fp16/fp32 plans would be measured as something they are not.
  for (const auto& k : prepared->plan.kernels)
    if (k.kind == exasim::gpu::KernelKind::Gemm && k.batch == 1 && k.dtype == exasim::gpu::DType::Bf16)
      unique.emplace(k.m, k.n, k.k, k.layout);
  return {unique.begin(), unique.end()};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time GEMMs and write a calibration CSV", "gemm_bench"};
  std::string backend = "host", device = "host-cpu",
              shapes_text = "256,256,256;512,512,512;1024,1024,1024;2048,256,1024", scenario, out;
  int repeats = 5;
  app.add_option("--backend", backend, "host (always) or cuda (when built with a CUDA toolkit)")
      ->check(CLI::IsMember({"host", "cuda"}))
      ->capture_default_str();
  app.add_option("--device", device,
                 "Device name written in the CSV (a name from `exasim presets` to compare with the model)")
      ->capture_default_str();
  app.add_option("--shapes", shapes_text, "M,N,K;M,N,K;... (ignored with --scenario)")->capture_default_str();
  app.add_option("--scenario", scenario, "Measure every GEMM shape of this scenario's plan");
  app.add_option("--repeats", repeats, "Timed runs per shape (median reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--out", out, "Calibration CSV to write");
  CLI11_PARSE(app, argc, argv);

  try {
    auto shapes = scenario.empty() ? parse_shapes(shapes_text) : scenario_shapes(scenario);
    auto known = exasim::gpu::find_device(device);
    std::unique_ptr<exasim::gpu::ShapeAwareGpu> model;
    if (known) model = std::make_unique<exasim::gpu::ShapeAwareGpu>(*known);
#ifndef EXASIM_HAVE_CUDA
    if (backend == "cuda")
      throw exasim::InputError("--backend", backend, "this build has no CUDA toolkit (allowed: host)");
#endif
    std::ofstream csv;
    if (!out.empty()) {
      csv.open(out);
      if (!csv) throw exasim::InputError("--out", out, "cannot open for writing");
      csv << "# measured by bench/gemm/gemm_bench --backend " << backend << "; median of " << repeats << " runs\n"
          << "device,kernel,m,n,k,time_s\n";
    }
    for (const auto& [m, n, k, layout] : shapes) {
      double measured = 0;
      if (backend == "host") {
        measured = exasim::bench::time_host_gemm(m, n, k, repeats);
      } else {
#ifdef EXASIM_HAVE_CUDA
        measured = exasim::bench::time_cuda_gemm(m, n, k, layout, repeats);
#endif
      }
      nlohmann::ordered_json line{{"device", device},
                                  {"backend", backend},
                                  {"m", m},
                                  {"n", n},
                                  {"k", k},
                                  {"layout", exasim::gpu::to_string(layout)},
                                  {"measured_s", measured},
                                  {"measured_tflops", 2.0 * m * n * k / measured / 1e12}};
      if (model) {
        const double predicted = model->gemm_time_s(m, n, k, layout);
        line["predicted_s"] = predicted;
        line["error_pct"] = 100 * (predicted - measured) / measured;
      }
      std::cout << line.dump() << std::endl;
      // The CSV has no layout column (calibration rows are NN): only NN measurements go into it.
      if (csv.is_open() && layout == exasim::gpu::GemmLayout::NN)
        csv << device << ",gemm," << m << "," << n << "," << k << "," << measured << "\n";
    }
  } catch (const exasim::InputError& e) {
    std::cerr << "gemm_bench: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gemm_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
