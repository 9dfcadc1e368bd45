#include "sim/gpu/internal/calibration.hpp"

#include "sim/core/error.hpp"
#include "sim/gpu/shape_aware_gpu.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

using namespace exasim::gpu;
using exasim::InputError;

namespace {

// A CSV in the system temp directory, removed when the test ends.
class TempCsv {
 public:
  TempCsv(const std::string& name, const std::string& content)
      : path_((std::filesystem::temp_directory_path() / ("exasim_calibration_test_" + name + ".csv")).string()) {
    std::ofstream(path_) << content;
  }
  ~TempCsv() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempCsv(const TempCsv&) = delete;
  TempCsv& operator=(const TempCsv&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::shared_ptr<const GpuModel> shape_aware(const char* name) {
  return std::make_shared<ShapeAwareGpu>(*find_device(name));
}

// Loads `content` and returns the InputError it must raise.
InputError load_error(const std::string& name, const std::string& content) {
  TempCsv csv(name, content);
  try {
    (void)CalibrationTable::load_csv(csv.path());
  } catch (const InputError& e) {
    CHECK(e.source() == csv.path());
    return e;
  }
  FAIL("expected InputError for " << name);
  return InputError("", "", "");
}

// Loads `content` and checks the InputError's field and message.
void check_load_error(const std::string& name, const std::string& content, const std::string& field,
                      const std::string& message) {
  auto e = load_error(name, content);
  CHECK(e.field() == field);
  CHECK_THAT(e.what(), Catch::Contains(message));
}

constexpr const char* kTable =
    "# measured on one GCD, rocblas-bench\n"
    "device,kernel,m,n,k,time_s\n"
    "mi250x-gcd,gemm,1024,1024,1024,4e-5\n"
    "mi250x-gcd,gemm,4096,4096,4096,1.6e-3\n"
    "\n"
    "mi250x-gcd,gemm,8192,8192,8192,1e-2\n"
    "a100-40gb, gemm, 8192, 8192, 8192, 4.5e-3\n";

}  // namespace

TEST_CASE("calibration overrides the model on an exact shape match", "[unit]") {
  TempCsv csv("exact", kTable);
  auto table = CalibrationTable::load_csv(csv.path());
  CHECK(table.size() == 4);
  CalibratedGpu gpu(shape_aware("mi250x-gcd"), table);
  CHECK(gpu.device() == "mi250x-gcd");
  auto hit = gpu.lookup(gemm(8192, 8192, 8192));
  CHECK(hit.time_s == 1e-2);
  CHECK(hit.origin == CalibratedGpu::Origin::Measured);
  CHECK(hit.time_s != Approx(shape_aware("mi250x-gcd")->time_s(gemm(8192, 8192, 8192))));
  CHECK(gpu.spec().name == "mi250x-gcd");
}

TEST_CASE("between measured shapes, calibration interpolates linearly in flops", "[unit]") {
  TempCsv csv("interp", kTable);
  CalibratedGpu gpu(shape_aware("mi250x-gcd"), CalibrationTable::load_csv(csv.path()));
  // 4096 x 4096 x 8192 has twice the flops of 4096^3 and a quarter of 8192^3.
  const double f_lo = 2.0 * 4096 * 4096 * 4096, f_hi = 2.0 * 8192 * 8192 * 8192, f = 2 * f_lo;
  auto r = gpu.lookup(gemm(4096, 4096, 8192));
  CHECK(r.origin == CalibratedGpu::Origin::Interpolated);
  CHECK(r.time_s == Approx(1.6e-3 + (f - f_lo) / (f_hi - f_lo) * (1e-2 - 1.6e-3)));
  // Same flops as a measured point but another shape: that point's time.
  auto same_work = gpu.lookup(gemm(2048, 2048, 16384));
  CHECK(same_work.time_s == 1.6e-3);
}

TEST_CASE("outside the measured range calibration scales the model, elsewhere it is the model", "[unit]") {
  TempCsv csv("range", kTable);
  auto base = shape_aware("mi250x-gcd");
  CalibratedGpu gpu(base, CalibrationTable::load_csv(csv.path()));
  auto big = gemm(16384, 16384, 16384);
  auto r = gpu.lookup(big);
  CHECK(r.origin == CalibratedGpu::Origin::ScaledModel);
  CHECK(r.time_s == Approx(base->time_s(big) * 1e-2 / base->time_s(gemm(8192, 8192, 8192))));
  // Non-GEMM kernels and devices without rows: the wrapped model, untouched.
  Kernel mem{KernelKind::MemoryBound, 0, 1e9};
  CHECK(gpu.lookup(mem).origin == CalibratedGpu::Origin::Model);
  CHECK(gpu.time_s(mem) == base->time_s(mem));
  TempCsv other("other", "device,kernel,m,n,k,time_s\nh200,gemm,128,128,128,1e-5\n");
  auto h100 = shape_aware("h100-sxm");
  CalibratedGpu uncalibrated(h100, CalibrationTable::load_csv(other.path()));
  CHECK(uncalibrated.time_s(gemm(8192, 8192, 8192)) == h100->time_s(gemm(8192, 8192, 8192)));
}

TEST_CASE("a calibrated model for a device name that is not in the table of devices is an input error", "[unit]") {
  RooflineGpu roofline(to_gpu_spec(*find_device("a100-40gb")));
  auto base = std::make_shared<RooflineGpu>(roofline);
  CHECK_NOTHROW(CalibratedGpu(base, CalibrationTable{}));
  CHECK_THROWS_AS(CalibratedGpu(base, CalibrationTable{}, "A100-SXM4-40GB"), InputError);
}

TEST_CASE("malformed calibration CSVs name the file, line and field", "[unit]") {
  SECTION("unknown device") {
    auto e = load_error("unknown_device", "device,kernel,m,n,k,time_s\nmi355x,gemm,1,1,1,1e-3\n");
    CHECK(e.field() == "line 2, column device");
    CHECK(std::string(e.what()).find("mi355x") != std::string::npos);
  }
  SECTION("missing column") {
    auto e = load_error("missing_column", "device,kernel,m,n,time_s\nh200,gemm,1,1,1e-3\n");
    CHECK(std::string(e.what()).find("\"k\"") != std::string::npos);
  }
  SECTION("not a number") {
    auto e = load_error("not_a_number", "device,kernel,m,n,k,time_s\nh200,gemm,1,1,1,1e-3\nh200,gemm,x,1,1,1e-3\n");
    CHECK(e.field() == "line 3, column m");
  }
  SECTION("too few fields") {
    auto e = load_error("too_few", "device,kernel,m,n,k,time_s\nh200,gemm,1,1,1\n");
    CHECK(e.field() == "line 2");
  }
  SECTION("non-positive size or time") {
    CHECK(load_error("zero_m", "device,kernel,m,n,k,time_s\nh200,gemm,0,1,1,1e-3\n").field() == "line 2, column m");
    CHECK(load_error("neg_t", "device,kernel,m,n,k,time_s\nh200,gemm,1,1,1,-1\n").field() == "line 2, column time_s");
    CHECK(load_error("text_t", "device,kernel,m,n,k,time_s\nh200,gemm,1,1,1,1e-3s\n").field() ==
          "line 2, column time_s");
    CHECK(load_error("empty_t", "device,kernel,m,n,k,time_s\nh200,gemm,1,1,1,\n").field() == "line 2, column time_s");
  }
  SECTION("kernel that cannot be calibrated") {
    auto conv = load_error("conv", "device,kernel,m,n,k,time_s\nh200,conv,1,1,1,1e-3\n");
    CHECK(conv.field() == "line 2, column kernel");
    CHECK_THAT(conv.what(), Catch::Contains("unknown kernel 'conv'") && Catch::Contains("softmax"));
    // Attention is calibrated by its efficiency, not by a measured time.
    auto attn = load_error("attn", "device,kernel,m,n,k,time_s\nh200,attention,1,1,1,1e-3\n");
    CHECK(attn.field() == "line 2, column efficiency");
    CHECK_THAT(attn.what(), Catch::Contains("kernel 'attention' takes an efficiency"));
  }
  SECTION("duplicate shape") {
    auto e = load_error("dup", "device,kernel,m,n,k,time_s\nh200,gemm,2,3,4,1e-3\nh200,gemm,2,3,4,2e-3\n");
    CHECK(e.field() == "line 3");
  }
  SECTION("missing required column") {
    auto e = load_error("no_time", "device,kernel,m,n,k,efficiency\nh200,norm,,,,0.5\n");
    CHECK(e.field() == "header");
    CHECK_THAT(e.what(), Catch::Contains("missing column \"time_s\""));
  }
  SECTION("missing file") {
    CHECK_THROWS_AS(CalibrationTable::load_csv("/nonexistent/exasim/calibration.csv"), InputError);
  }
}

namespace {
constexpr const char* kEfficiencies =
    "device,kernel,m,n,k,time_s,batch,dtype,efficiency\n"
    "h100-sxm,softmax,,,,,,,0.5\n"
    "h100-sxm,attention,,,,,,,0.25\n"
    "a100-40gb,norm,,,,,,,0.3\n"
    "h100-sxm,gemm,2048,2048,128,2e-4,64,,\n"
    "h100-sxm,gemm,2048,2048,128,3e-4,64,fp32,\n";
}  // namespace

TEST_CASE("calibration efficiency rows replace the device's family and attention figures", "[unit]") {
  TempCsv csv("efficiencies", kEfficiencies);
  auto table = CalibrationTable::load_csv(csv.path());
  CHECK(table.size() == 5);
  const DeviceSpec h100 = *find_device("h100-sxm");
  auto calibrated = table.apply_efficiencies(h100);
  CHECK(calibrated.softmax_efficiency.value == 0.5);
  CHECK(calibrated.softmax_efficiency.source == "calibration " + csv.path() + " line 2");
  CHECK(calibrated.attention_efficiency.value == 0.25);
  CHECK(calibrated.norm_efficiency.value == h100.norm_efficiency.value);  // a100's row is not h100's

  CalibratedGpu gpu(h100, table);
  const double launch = h100.kernel_launch_s.value;
  auto softmax = gpu.lookup(memory_kernel(MemoryFamily::Softmax, 1e9));
  CHECK(softmax.origin == CalibratedGpu::Origin::Model);
  CHECK(softmax.time_s == Approx(1e9 / (3.35e12 * 0.5) + launch));
  Kernel attn{KernelKind::FlashAttention, 1e13, 1e8};
  CHECK(gpu.time_s(attn) == Approx(1e13 / (989e12 * 0.25) + launch));
  // Families without a row keep the device's estimate.
  auto norm = memory_kernel(MemoryFamily::Norm, 1e9);
  CHECK(gpu.time_s(norm) == Approx(ShapeAwareGpu(h100).time_s(norm)));
}

TEST_CASE("calibrated GEMM rows match a kernel's batch and dtype exactly", "[unit]") {
  TempCsv csv("batched", kEfficiencies);
  const DeviceSpec h100 = *find_device("h100-sxm");
  CalibratedGpu gpu(h100, CalibrationTable::load_csv(csv.path()));
  auto bf16 = gpu.lookup(batched_gemm(64, 2048, 2048, 128));
  CHECK(bf16.origin == CalibratedGpu::Origin::Measured);
  CHECK(bf16.time_s == 2e-4);
  CHECK(gpu.time_s(batched_gemm(64, 2048, 2048, 128, GemmLayout::NN, DType::Fp32)) == 3e-4);
  // Another batch, another dtype, or a single product: no rows of its own, so the model.
  ShapeAwareGpu model(h100);
  for (const auto& k : {batched_gemm(32, 2048, 2048, 128),
                        batched_gemm(64, 2048, 2048, 128, GemmLayout::NN, DType::Fp16), gemm(2048, 2048, 128)}) {
    auto r = gpu.lookup(k);
    CHECK(r.origin == CalibratedGpu::Origin::Model);
    CHECK(r.time_s == model.time_s(k));
  }
}

TEST_CASE("a wrapped opaque model refuses efficiency rows it cannot apply", "[unit]") {
  TempCsv csv("opaque", kEfficiencies);
  auto table = CalibrationTable::load_csv(csv.path());
  CHECK_THROWS_AS(CalibratedGpu(shape_aware("h100-sxm"), table), std::invalid_argument);
  CHECK_NOTHROW(CalibratedGpu(shape_aware("h200"), table));  // no rows for h200
}

TEST_CASE("bad efficiency and batched rows name the file, line and column", "[unit]") {
  const std::string header = "device,kernel,m,n,k,time_s,batch,dtype,efficiency\n";
  auto check = [&](const std::string& name, const std::string& rows, const std::string& field,
                   const std::string& message) { check_load_error(name, header + rows, field, message); };
  check("family", "h200,sofmax,,,,,,,0.5\n", "line 2, column kernel",
        "unknown kernel 'sofmax' (expected gemm, attention");
  check("above_one", "h200,norm,,,,,,,1.5\n", "line 2, column efficiency", "must be a fraction in (0, 1]");
  check("zero", "h200,norm,,,,,,,0\n", "line 2, column efficiency", "must be a fraction in (0, 1]");
  check("text", "h200,norm,,,,,,,fast\n", "line 2, column efficiency", "not a number: 'fast'");
  check("missing", "h200,dropout,,,,,,,\n", "line 2, column efficiency",
        "kernel 'dropout' takes an efficiency (its sustained fraction of HBM bandwidth");
  check("both", "h200,optimizer,,,,1e-3,,,0.5\n", "line 2, column time_s", "must be empty on an efficiency row");
  check("shape", "h200,activation,1,,,,,,0.5\n", "line 2, column m", "must be empty on an efficiency row");
  check("gemm_eff", "h200,gemm,1,1,1,1e-3,,,0.5\n", "line 2, column efficiency", "a gemm row gives a measured time_s");
  check("dup", "h200,norm,,,,,,,0.5\n# again\nh200,norm,,,,,,,0.6\n", "line 4",
        "duplicate efficiency row for h200 norm (first: calibration");
  check("dtype", "h200,gemm,1,1,1,1e-3,,int8,\n", "line 2, column dtype",
        "unknown dtype 'int8' (expected bf16, fp16, fp32 or fp8)");
  check("fp8 on a device without it", "a100-80gb,gemm,1,1,1,1e-3,,fp8,\n", "line 2, column dtype",
        "device 'a100-80gb' has no FP8 tensor cores");
  check("batch", "h200,gemm,1,1,1,1e-3,0,,\n", "line 2, column batch", "must be a positive integer");
  check("batch_text", "h200,gemm,1,1,1,1e-3,x,,\n", "line 2, column batch", "must be a positive integer (got 'x')");
  check("dup_batched", "h200,gemm,1,1,1,1e-3,4,fp16,\nh200,gemm,1,1,1,2e-3,4,fp16,\n", "line 3",
        "duplicate row for h200 gemm 4 x 1x1x1 fp16");
  // Same shape, other batch or dtype: not a duplicate.
  TempCsv ok("distinct", header + "h200,gemm,1,1,1,1e-3,,,\nh200,gemm,1,1,1,1e-3,2,,\nh200,gemm,1,1,1,1e-3,,fp16,\n");
  CHECK(CalibrationTable::load_csv(ok.path()).size() == 3);
}

// The columns `exasim calibrate --from-trace` adds: a GEMM row's layout, collective rows.
TEST_CASE("calibration reads layouts and collective rows, and prefers the kernel's layout", "[unit]") {
  TempCsv csv("layouts",
              "device,kernel,m,n,k,time_s,batch,dtype,efficiency,layout,bytes,group_size,bus_bandwidth_Bps\n"
              "h100-sxm,gemm,1024,1024,1024,3e-5,,,,,,,\n"
              "h100-sxm,gemm,1024,1024,1024,5e-5,,,,TN,,,\n"
              "h100-sxm,gemm,2048,2048,2048,2e-4,,,,NT,,,\n"
              "h100-sxm,all_reduce,,,,1e-3,,,,,1e8,8,1.75e11\n"
              "h100-sxm,broadcast,,,,1e-5,,,,,1e4,,1e9\n");
  auto table = CalibrationTable::load_csv(csv.path());
  CHECK(table.size() == 5);
  REQUIRE(table.collectives().size() == 2);
  CHECK(table.collectives()[0].kernel == "all_reduce");
  CHECK(table.collectives()[0].bytes == 1e8);
  CHECK(table.collectives()[0].group_size == 8);
  CHECK(table.collectives()[0].bus_bandwidth_Bps == 1.75e11);
  CHECK(table.collectives()[1].group_size == 0);
  CalibratedGpu gpu(*find_device("h100-sxm"), table);
  // Rule 1 by layout: TN has its own row; NN takes the row without a layout; NT of 2048^3 takes the only row.
  CHECK(gpu.lookup(gemm(1024, 1024, 1024, GemmLayout::TN)).time_s == 5e-5);
  CHECK(gpu.lookup(gemm(1024, 1024, 1024, GemmLayout::NN)).time_s == 3e-5);
  CHECK(gpu.lookup(gemm(2048, 2048, 2048, GemmLayout::NN)).time_s == 2e-4);
}

TEST_CASE("bad layouts and collective rows name the file, line and column", "[unit]") {
  const std::string header =
      "device,kernel,m,n,k,time_s,batch,dtype,efficiency,layout,bytes,group_size,bus_bandwidth_Bps\n";
  auto check = [&](const std::string& name, const std::string& rows, const std::string& field,
                   const std::string& message) { check_load_error(name, header + rows, field, message); };
  check("layout", "h200,gemm,1,1,1,1e-3,,,,TT,,,\n", "line 2, column layout",
        "unknown layout 'TT' (expected NN, NT or TN)");
  check("dup_layout", "h200,gemm,1,1,1,1e-3,,,,NT,,,\nh200,gemm,1,1,1,2e-3,,,,NT,,,\n", "line 3",
        "duplicate row for h200 gemm 1x1x1 bf16 NT");
  check("gemm_bytes", "h200,gemm,1,1,1,1e-3,,,,,64,,\n", "line 2, column bytes", "must be empty on a gemm row");
  check("coll_shape", "h200,all_gather,1,,,1e-3,,,,,64,2,1e9\n", "line 2, column m",
        "must be empty on a collective row");
  check("coll_bytes", "h200,all_gather,,,,1e-3,,,,,,2,1e9\n", "line 2, column bytes", "not a number: ''");
  check("coll_zero", "h200,all_gather,,,,1e-3,,,,,0,2,1e9\n", "line 2, column bytes",
        "must be a positive number of bytes");
  check("coll_bw", "h200,reduce_scatter,,,,1e-3,,,,,64,2,-1\n", "line 2, column bus_bandwidth_Bps",
        "must be a positive number of bytes per second");
  check("coll_dup", "h200,send_recv,,,,1e-3,,,,,64,2,1e9\nh200,send_recv,,,,2e-3,,,,,64,2,1e9\n", "line 3",
        "duplicate row for h200 send_recv");
  check("eff_layout", "h200,norm,,,,,,,0.5,NN,,,\n", "line 2, column layout", "must be empty on an efficiency row");
}
