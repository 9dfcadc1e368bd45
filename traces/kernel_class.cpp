#include "traces/kernel_class.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace exasim::trace {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool contains_any(const std::string& haystack, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return haystack.find(n) != std::string::npos; });
}

// The name without a leading "void " (demangled kernels carry their return type).
std::string_view bare(std::string_view name) {
  constexpr std::string_view kVoid = "void ";
  return name.substr(0, kVoid.size()) == kVoid ? name.substr(kVoid.size()) : name;
}

}  // namespace

std::string_view to_string(KernelClass cls) {
  switch (cls) {
    case KernelClass::Gemm: return "gemm";
    case KernelClass::Attention: return "attention";
    case KernelClass::Collective: return "collective";
    case KernelClass::Memory: return "memory";
    case KernelClass::Other: return "other";
  }
  return "?";
}

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::SendRecv: return "send_recv";
    case CollectiveKind::AllToAll: return "all_to_all";
    case CollectiveKind::Other: return "other";
  }
  return "?";
}

// The rule table of docs/traces.md, in order. Keep the two in step.
KernelClass classify_kernel(std::string_view name) {
  const std::string n = lower(bare(name));
  // 1. collective: NCCL (ncclKernel_*, ncclDevKernel_*) and RCCL (the same names, plus rccl* helpers).
  if (n.rfind("nccl", 0) == 0 || n.rfind("rccl", 0) == 0) return KernelClass::Collective;
  // 2. attention: FlashAttention, xFormers/CK/cuDNN fused multi-head attention, PyTorch's SDPA kernels.
  if (contains_any(n, {"flash", "fmha", "attention", "attn", "sdpa"})) return KernelClass::Attention;
  // 3. gemm: cuBLAS/cuBLASLt (incl. their split-K reductions), CUTLASS, Tensile (Cijk_*), hipBLASLt,
  //    rocBLAS, vendor *gemm* kernels, cuDNN implicit-GEMM convolutions (xmma, scudnn).
  if (n.rfind("cijk_", 0) == 0 || contains_any(n, {"gemm", "cublas", "cutlass", "hipblaslt", "rocblas", "tensile",
                                                   "xmma", "scudnn", "matmul", "wmma"}))
    return KernelClass::Gemm;
  // 4. memory: PyTorch's elementwise/reduce/copy/index kernels, Triton's pointwise and reduction kernels
  //    (torch.compile), and the usual bandwidth-bound families.
  if (n.rfind("at::native::", 0) == 0 || n.rfind("triton_poi", 0) == 0 || n.rfind("triton_red", 0) == 0 ||
      n.rfind("triton_per", 0) == 0 ||
      contains_any(n, {"elementwise", "reduce", "copy", "fill", "norm", "softmax", "dropout", "transpose", "nchwtonhwc",
                       "nhwctonchw", "catarray", "index", "scatter", "gather", "pool", "adam", "multi_tensor", "bn_"}))
    return KernelClass::Memory;
  return KernelClass::Other;
}

CollectiveKind collective_kind(std::string_view kernel_name, std::string_view collective_name) {
  // Most specific first: "reduce_scatter" contains "reduce", "allgather" contains "gather".
  auto from = [](const std::string& s) -> std::optional<CollectiveKind> {
    std::string t;
    for (char c : s)
      if (c != '_') t += c;
    if (t.find("reducescatter") != std::string::npos) return CollectiveKind::ReduceScatter;
    if (t.find("allreduce") != std::string::npos) return CollectiveKind::AllReduce;
    if (t.find("allgather") != std::string::npos) return CollectiveKind::AllGather;
    if (t.find("alltoall") != std::string::npos) return CollectiveKind::AllToAll;
    if (t.find("broadcast") != std::string::npos) return CollectiveKind::Broadcast;
    if (t.find("sendrecv") != std::string::npos || t.find("send") != std::string::npos ||
        t.find("recv") != std::string::npos)
      return CollectiveKind::SendRecv;
    return std::nullopt;
  };
  if (!collective_name.empty())
    if (auto k = from(lower(collective_name))) return *k;
  // ncclKernel_AllReduce_RING_LL_Sum_float(...): the word after the prefix.
  std::string n = lower(bare(kernel_name));
  if (auto paren = n.find('('); paren != std::string::npos) n.resize(paren);
  if (auto k = from(n)) return *k;
  return CollectiveKind::Other;
}

std::optional<int> dtype_bytes(std::string_view dtype) {
  std::string d = lower(dtype);
  if (d.rfind("c10::", 0) == 0) d = d.substr(5);
  struct Entry {
    std::string_view name;
    int bytes;
  };
  static constexpr std::array<Entry, 17> kTable{{{"float", 4},
                                                 {"float32", 4},
                                                 {"int", 4},
                                                 {"int32", 4},
                                                 {"uint32", 4},
                                                 {"double", 8},
                                                 {"float64", 8},
                                                 {"long", 8},
                                                 {"int64", 8},
                                                 {"bfloat16", 2},
                                                 {"half", 2},
                                                 {"float16", 2},
                                                 {"short", 2},
                                                 {"byte", 1},
                                                 {"char", 1},
                                                 {"bool", 1},
                                                 {"int8", 1}}};
  for (const auto& e : kTable)
    if (d == e.name) return e.bytes;
  if (d == "uint8" || d == "float8_e4m3fn" || d == "float8_e5m2") return 1;
  return std::nullopt;
}

std::string gemm_layout(std::string_view kernel_name) {
  const std::string n = lower(kernel_name);
  if (n.rfind("cijk_", 0) == 0 && n.size() >= 14) {
    // Tensile: Cijk_Ailk_Bljk is NN; Alik (A transposed) and Bjlk (B transposed) flip a letter.
    const std::string a = n.substr(5, 4), b = n.substr(10, 4);
    if ((a == "ailk" || a == "alik") && (b == "bljk" || b == "bjlk"))
      return std::string(a == "alik" ? "T" : "N") + (b == "bjlk" ? "T" : "N");
    return "";
  }
  for (const char* layout : {"nn", "nt", "tn", "tt"}) {
    const std::string token = std::string("_") + layout;
    for (auto pos = n.find(token); pos != std::string::npos; pos = n.find(token, pos + 1)) {
      const std::size_t end = pos + token.size();
      if (end == n.size() || n[end] == '_' || n[end] == '(' || n[end] == '>' || n[end] == ',')
        return {static_cast<char>(std::toupper(layout[0])), static_cast<char>(std::toupper(layout[1]))};
    }
  }
  return "";
}

std::string calibration_dtype(std::string_view type) {
  std::string t = lower(type);
  if (t.rfind("c10::", 0) == 0) t = t.substr(5);
  if (t == "float" || t == "float32") return "fp32";
  if (t == "bfloat16") return "bf16";
  if (t == "half" || t == "float16") return "fp16";
  return "";
}

}  // namespace exasim::trace
