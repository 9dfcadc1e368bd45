#include "traces/measured.hpp"

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <istream>
#include <map>
#include <optional>

namespace exasim::trace {

namespace {

// A JSON number as an integer id, count or dimension; `fallback` for one no integer type can hold
// (a cast would be undefined) or NaN.
std::int64_t to_int64(double v, std::int64_t fallback) {
  constexpr double kLimit = 9.0e15;  // exact in a double, far beyond any id, stream or dimension
  return (v >= -kLimit && v <= kLimit) ? static_cast<std::int64_t>(v) : fallback;
}
int to_int(double v, int fallback) { return (v >= -2.0e9 && v <= 2.0e9) ? static_cast<int>(v) : fallback; }

// What a container on the SAX stack is; values are routed by the innermost one.
enum class Ctx : std::uint8_t {
  Root,
  Events,
  Event,
  Args,
  InputDims,
  InputDim,
  InputTensor,
  InputTypes,
  Devices,
  Device,
  Distributed,
  Skip
};

// One event's fields that the reader uses, with their JSON types checked as they arrive.
struct EventFields {
  std::optional<std::string> ph, cat, name, collective, dtype;
  std::optional<double> ts, dur, in_nelems, out_nelems, group_size, stream, correlation, external_id;
  const char* bad_field = nullptr;  ///< first field with the wrong type (reported if the event is used)
  const char* bad_expect = nullptr;
  std::vector<double> input_numel;              ///< per input: elements (0 for scalars and empty lists)
  std::vector<std::vector<double>> input_dims;  ///< per input: its dims when it is one tensor
  std::vector<std::string> input_types;
  void clear() { *this = EventFields{}; }
};

class KinetoSax {
 public:
  KinetoSax(std::string path, std::uint64_t max_events) : path_(std::move(path)), max_events_(max_events) {
    trace_.source = path_;
  }

  // --- scalar values -------------------------------------------------------------------------------
  bool null() { return scalar(std::nullopt, std::nullopt); }
  bool boolean(bool) { return scalar(std::nullopt, std::nullopt); }
  bool number_integer(std::int64_t v) { return scalar(static_cast<double>(v), std::nullopt); }
  bool number_unsigned(std::uint64_t v) { return scalar(static_cast<double>(v), std::nullopt); }
  bool number_float(double v, const std::string&) { return scalar(v, std::nullopt); }
  bool string(std::string& v) { return scalar(std::nullopt, std::move(v)); }
  bool binary(nlohmann::json::binary_t&) { return scalar(std::nullopt, std::nullopt); }

  // --- containers ----------------------------------------------------------------------------------
  bool start_object(std::size_t) {
    Ctx parent = stack_.empty() ? Ctx::Skip : stack_.back();
    Ctx ctx = Ctx::Skip;
    if (stack_.empty()) {
      ctx = Ctx::Root;
      root_seen_ = true;
    } else if (parent == Ctx::Events) {
      ctx = Ctx::Event;
      ev_.clear();
    } else if (parent == Ctx::Event && key_ == "args") {
      ctx = Ctx::Args;
    } else if (parent == Ctx::Devices && devices_seen_++ == 0) {
      ctx = Ctx::Device;
    } else if (parent == Ctx::Root && key_ == "distributedInfo") {
      ctx = Ctx::Distributed;
    } else if (parent == Ctx::Root && key_ == "traceEvents") {
      not_an_array_of_events();
    }
    stack_.push_back(ctx);
    return true;
  }
  bool end_object() {
    const Ctx ctx = stack_.back();
    stack_.pop_back();
    if (ctx == Ctx::Event) finish_event();
    element_done();
    return true;
  }
  bool start_array(std::size_t) {
    Ctx parent = stack_.empty() ? Ctx::Skip : stack_.back();
    Ctx ctx = Ctx::Skip;
    if (stack_.empty()) {
      ctx = Ctx::Events;  // the Chrome trace's bare-array form
      root_seen_ = events_seen_ = true;
    } else if (parent == Ctx::Root && key_ == "traceEvents") {
      ctx = Ctx::Events;
      events_seen_ = true;
    } else if (parent == Ctx::Root && key_ == "deviceProperties") {
      ctx = Ctx::Devices;
    } else if (parent == Ctx::Args && key_ == "Input Dims") {
      ctx = Ctx::InputDims;
    } else if (parent == Ctx::Args && key_ == "Input type") {
      ctx = Ctx::InputTypes;
    } else if (parent == Ctx::InputDims) {
      ctx = Ctx::InputDim;
      ev_.input_numel.push_back(0);
      ev_.input_dims.emplace_back();
      dim_product_ = 1;
      dim_count_ = 0;
    } else if (parent == Ctx::InputDim) {
      ctx = Ctx::InputTensor;  // one tensor of a TensorList input
      ev_.input_dims.back().clear();
      dim_product_ = 1;
      dim_count_ = 0;
    }
    stack_.push_back(ctx);
    return true;
  }
  bool end_array() {
    const Ctx ctx = stack_.back();
    stack_.pop_back();
    if (ctx == Ctx::InputDim || ctx == Ctx::InputTensor) {
      if (dim_count_ > 0) ev_.input_numel.back() += dim_product_;
      dim_count_ = 0;
      dim_product_ = 1;
    }
    element_done();
    return true;
  }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    std::string what = e.what();
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 1, column 5: ".
    if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    throw InputError(path_, "byte " + std::to_string(position),
                     "not valid JSON (a Kineto trace is a JSON object with a traceEvents array; truncated or not "
                     "a trace?): " +
                         what);
  }

  MeasuredTrace finish() {
    if (!root_seen_) throw InputError(path_, "", "empty file: expected a Kineto trace (JSON with traceEvents)");
    if (!events_seen_)
      throw InputError(path_, "traceEvents",
                       "missing: a Kineto trace is a JSON object with a traceEvents array of events");
    if (trace_.kernels.empty())
      throw InputError(path_, "traceEvents",
                       "no GPU kernels (events with \"cat\": \"kernel\"): was the profiler run with "
                       "ProfilerActivity.CUDA (or on a ROCm build)?");
    std::stable_sort(trace_.steps.begin(), trace_.steps.end(),
                     [](const MeasuredStep& a, const MeasuredStep& b) { return a.start_us < b.start_us; });
    // A step recorded both as a user annotation and as an operator counts once.
    auto same = [](const MeasuredStep& a, const MeasuredStep& b) {
      return a.name == b.name && a.start_us == b.start_us;
    };
    trace_.steps.erase(std::unique(trace_.steps.begin(), trace_.steps.end(), same), trace_.steps.end());
    return std::move(trace_);
  }

 private:
  // Counts the elements of traceEvents, for error messages.
  void element_done() {
    if (!stack_.empty() && stack_.back() == Ctx::Events && ++event_index_ > max_events_)
      too_many_events(path_, max_events_);
  }
  void not_an_array_of_events() const { throw InputError(path_, "traceEvents", "must be an array of event objects"); }

  bool scalar(std::optional<double> number, std::optional<std::string> text) {
    if (stack_.empty()) throw InputError(path_, "", "expected a Kineto trace (a JSON object), got a single value");
    switch (stack_.back()) {
      case Ctx::Event: event_field(number, std::move(text)); break;
      case Ctx::Args: args_field(number, std::move(text)); break;
      case Ctx::InputDim:
      case Ctx::InputTensor:
        if (number) {
          dim_product_ *= *number;
          ++dim_count_;
          if (stack_.back() == Ctx::InputDim) ev_.input_dims.back().push_back(*number);
        }
        break;
      case Ctx::InputTypes: ev_.input_types.push_back(text.value_or("")); break;
      case Ctx::Root:
        if (key_ == "traceEvents") not_an_array_of_events();
        break;
      case Ctx::Device:
        if (key_ == "name" && text) trace_.device = *text;
        if (key_ == "totalGlobalMem" && number) trace_.device_memory_bytes = *number;
        break;
      case Ctx::Distributed:
        if (key_ == "rank" && number) trace_.rank = to_int(*number, -1);
        if (key_ == "world_size" && number) trace_.world_size = std::max(0, to_int(*number, 0));
        break;
      case Ctx::Events:
        throw InputError(path_, "traceEvents[" + std::to_string(event_index_) + "]",
                         "must be an event object, got a single value");
      default: break;
    }
    element_done();
    return true;
  }

  void type_error(const char* field, const char* expect) {
    if (ev_.bad_field == nullptr) {
      ev_.bad_field = field;
      ev_.bad_expect = expect;
    }
  }

  void take_string(std::optional<std::string>& slot, std::optional<std::string>& text, const char* field) {
    if (text) {
      slot = std::move(text);
    } else {
      type_error(field, "a string");
    }
  }
  void take_number(std::optional<double>& slot, const std::optional<double>& number,
                   const std::optional<std::string>& text, const char* field) {
    if (number) {
      slot = number;
    } else if (text) {
      // Some profilers write ids and streams as strings ("0x0", "7"); accept a whole integer.
      char* end = nullptr;
      const long long v = std::strtoll(text->c_str(), &end, 0);
      if (!text->empty() && end != nullptr && *end == '\0') {
        slot = static_cast<double>(v);
      } else {
        type_error(field, "a number");
      }
    } else {
      type_error(field, "a number");
    }
  }

  void event_field(const std::optional<double>& number, std::optional<std::string> text) {
    if (key_ == "ph")
      take_string(ev_.ph, text, "ph");
    else if (key_ == "cat")
      take_string(ev_.cat, text, "cat");
    else if (key_ == "name")
      take_string(ev_.name, text, "name");
    else if (key_ == "ts")
      take_number(ev_.ts, number, std::nullopt, "ts");
    else if (key_ == "dur")
      take_number(ev_.dur, number, std::nullopt, "dur");
  }

  void args_field(const std::optional<double>& number, std::optional<std::string> text) {
    if (key_ == "correlation")
      take_number(ev_.correlation, number, text, "args.correlation");
    else if (key_ == "External id")
      take_number(ev_.external_id, number, text, "args.External id");
    else if (key_ == "stream")
      take_number(ev_.stream, number, text, "args.stream");
    else if (key_ == "Collective name")
      take_string(ev_.collective, text, "args.Collective name");
    else if (key_ == "dtype")
      take_string(ev_.dtype, text, "args.dtype");
    else if (key_ == "In msg nelems")
      take_number(ev_.in_nelems, number, text, "args.In msg nelems");
    else if (key_ == "Out msg nelems")
      take_number(ev_.out_nelems, number, text, "args.Out msg nelems");
    else if (key_ == "Group size")
      take_number(ev_.group_size, number, text, "args.Group size");
  }

  std::string where(const char* field) const {
    return "traceEvents[" + std::to_string(event_index_) + "]" + (field ? std::string(".") + field : "");
  }
  void require_types() const {
    if (ev_.bad_field != nullptr)
      throw InputError(path_, where(ev_.bad_field), std::string("must be ") + ev_.bad_expect);
  }
  double require(const std::optional<double>& v, const char* field, const char* what) const {
    if (!v) throw InputError(path_, where(field), std::string("missing: ") + what);
    return *v;
  }
  // Times and sizes in a trace are finite and within bounds no real run reaches; anything else (a
  // negative duration, 1e308, inf) would print as null or inf, or overflow the sums built from it.
  double in_range(double v, double lo, double hi, const char* field, const char* allowed) const {
    if (!(v >= lo && v <= hi)) throw InputError(path_, where(field), std::string("must be ") + allowed);
    return v;
  }
  double timestamp(const std::optional<double>& v, const char* what) const {
    // Relative to any base the profiler chose, so negative too.
    return in_range(require(v, "ts", what), -kMaxTimestampUs, kMaxTimestampUs, "ts",
                    "a time in [-1e17, 1e17] microseconds");
  }
  double duration(const std::optional<double>& v, const char* what) const {
    return in_range(require(v, "dur", what), 0, kMaxDurationUs, "dur", "a duration in [0, 1e12] microseconds");
  }
  static constexpr double kMaxTimestampUs = 1e17;  // 3000 years after the epoch
  static constexpr double kMaxDurationUs = 1e12;   // 11.6 days
  static constexpr double kMaxElements = 1e15;     // a message of a petabyte or more

  std::uint32_t intern(const std::string& name) {
    auto [it, inserted] = name_ids_.try_emplace(name, static_cast<std::uint32_t>(trace_.names.size()));
    if (inserted) trace_.names.push_back(name);
    return it->second;
  }

  void finish_event() {
    if (!ev_.cat || !ev_.ph || *ev_.ph != "X") {
      // Not a complete event: only the launch link of a runtime call could matter, and those are "X".
      return;
    }
    // Kineto's categories; PyTorch 1.8-1.10 wrote "Kernel", "Memcpy", "Memset", "Runtime", "Operator".
    std::string cat = *ev_.cat;
    std::transform(cat.begin(), cat.end(), cat.begin(), [](unsigned char c) { return std::tolower(c); });
    const bool cpu_op = cat == "cpu_op" || cat == "operator";
    if (cat == "kernel") {
      require_types();
      DeviceKernel k;
      k.start_us = timestamp(ev_.ts, "a kernel needs its start time ts (microseconds)");
      k.dur_us = duration(ev_.dur, "a kernel needs its duration dur (microseconds)");
      if (!ev_.name) throw InputError(path_, where("name"), "missing: a kernel needs its name");
      k.stream = to_int64(ev_.stream.value_or(0), 0);
      k.correlation = to_int64(ev_.correlation.value_or(-1), -1);
      k.external_id = to_int64(ev_.external_id.value_or(-1), -1);
      k.name = intern(*ev_.name);
      k.cls = classify_kernel(*ev_.name);
      if (k.cls == KernelClass::Collective) {
        k.coll = collective_kind(*ev_.name, ev_.collective.value_or(""));
        k.group_size = std::max(0, to_int(ev_.group_size.value_or(0), 0));
        const auto elem = ev_.dtype ? dtype_bytes(*ev_.dtype) : std::nullopt;
        // S as in SCHEMA.md: the all-gather's output, every other collective's input.
        const bool gather = k.coll == CollectiveKind::AllGather;
        const auto& nelems = gather ? ev_.out_nelems : ev_.in_nelems;
        if (elem && nelems)
          k.bytes = in_range(*nelems, 0, kMaxElements, gather ? "args.Out msg nelems" : "args.In msg nelems",
                             "a count of elements in [0, 1e15]") *
                    *elem;
      }
      trace_.kernels.push_back(k);
    } else if (cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "memcpy" || cat == "memset") {
      require_types();
      ++trace_.copies;
      trace_.copy_time_us += duration(ev_.dur, "a copy needs its duration dur (microseconds)");
    } else if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime") {
      if (ev_.correlation && ev_.ts) trace_.launch_us.emplace(to_int64(*ev_.correlation, -1), *ev_.ts);
    } else if ((cat == "user_annotation" || cpu_op) && ev_.name && ev_.name->rfind("ProfilerStep#", 0) == 0) {
      require_types();
      MeasuredStep step;
      step.name = *ev_.name;
      step.start_us = timestamp(ev_.ts, "a ProfilerStep needs its start time ts");
      step.dur_us = duration(ev_.dur, "a ProfilerStep needs its duration dur");
      trace_.steps.push_back(step);
    } else if (cpu_op && ev_.external_id && !ev_.input_dims.empty()) {
      add_op_shape();
    }
  }

  void add_op_shape() {
    OpShape s;
    s.op = ev_.name.value_or("");
    s.dtype = ev_.input_types.empty() ? "" : ev_.input_types.front();
    for (std::size_t i = 0; i < ev_.input_numel.size(); ++i) {
      const std::string type = i < ev_.input_types.size() ? ev_.input_types[i] : s.dtype;
      const auto elem = dtype_bytes(type).value_or(dtype_bytes(s.dtype).value_or(0));
      s.input_bytes += ev_.input_numel[i] * elem;
      s.largest_input_bytes = std::max(s.largest_input_bytes, ev_.input_numel[i] * elem);
    }
    if (!ev_.input_dims.empty())
      for (double v : ev_.input_dims.front()) s.first_dims.push_back(to_int64(v, 0));
    const auto& d = ev_.input_dims;
    auto dims = [&](std::size_t i) -> const std::vector<double>& {
      static const std::vector<double> none;
      return i < d.size() ? d[i] : none;
    };
    // aten::mm(A[m,k], B[k,n]); addmm(bias, A, B); bmm(A[b,m,k], B[b,k,n]); baddbmm(bias, A, B).
    const bool add = s.op == "aten::addmm" || s.op == "aten::baddbmm";
    const auto& a = dims(add ? 1 : 0);
    const auto& b = dims(add ? 2 : 1);
    if ((s.op == "aten::mm" || s.op == "aten::addmm") && a.size() == 2 && b.size() == 2 && a[1] == b[0]) {
      s.m = to_int64(a[0], 0);
      s.k = to_int64(a[1], 0);
      s.n = to_int64(b[1], 0);
      s.dtype = add && ev_.input_types.size() > 1 ? ev_.input_types[1] : s.dtype;
    } else if ((s.op == "aten::bmm" || s.op == "aten::baddbmm") && a.size() == 3 && b.size() == 3 && a[2] == b[1]) {
      s.batch = to_int64(a[0], 0);
      s.m = to_int64(a[1], 0);
      s.k = to_int64(a[2], 0);
      s.n = to_int64(b[2], 0);
      s.dtype = add && ev_.input_types.size() > 1 ? ev_.input_types[1] : s.dtype;
    }
    trace_.op_shapes.insert_or_assign(to_int64(*ev_.external_id, -1), std::move(s));
  }

  std::string path_;
  std::uint64_t max_events_;
  MeasuredTrace trace_;
  std::vector<Ctx> stack_;
  std::string key_;
  EventFields ev_;
  std::size_t event_index_ = 0;
  std::size_t devices_seen_ = 0;
  double dim_product_ = 1;
  int dim_count_ = 0;
  bool root_seen_ = false;
  bool events_seen_ = false;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
};

}  // namespace

MeasuredTrace read_kineto(const std::string& path) {
  const auto limits = input_limits();
  InputFileBuf buffer(path, "a trace", limits.max_bytes);
  std::istream in(&buffer);
  KinetoSax sax(path, limits.max_events);
  nlohmann::json::sax_parse(in, &sax);
  return sax.finish();
}

MeasuredTrace from_trace_rows(const std::vector<TraceRow>& rows, std::uint32_t rank, const std::string& source) {
  MeasuredTrace t;
  t.source = source;
  t.device = "exasim simulation";
  t.rank = static_cast<int>(rank);
  double end_us = 0;
  for (const auto& r : rows) {
    if (r.rank != rank || r.kind == "wait") continue;
    DeviceKernel k;
    k.start_us = r.t_start_s * 1e6;
    k.dur_us = (r.t_end_s - r.t_start_s) * 1e6;
    if (r.kind == "gemm") {
      k.cls = KernelClass::Gemm;
    } else if (r.kind == "attention") {
      k.cls = KernelClass::Attention;
    } else if (r.kind == "memory") {
      k.cls = KernelClass::Memory;
    } else {
      k.cls = KernelClass::Collective;
      k.coll = collective_kind(r.kind, r.kind);
      k.bytes = r.bytes;
      k.stream = 1;
    }
    auto it = std::find(t.names.begin(), t.names.end(), r.kind);
    k.name = static_cast<std::uint32_t>(it - t.names.begin());
    if (it == t.names.end()) t.names.push_back(r.kind);
    t.kernels.push_back(k);
    end_us = std::max(end_us, r.t_end_s * 1e6);
  }
  t.steps.push_back({"iteration", 0.0, end_us});
  return t;
}

std::vector<MeasuredTrace> read_measured(const std::string& path) {
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  if (!csv) return {read_kineto(path)};
  // One pass sorts the rows into their ranks, so a trace of many small ranks reads in linear time.
  std::map<std::uint32_t, std::vector<TraceRow>> ranks;
  for (auto& r : read_csv(path)) ranks[r.rank].push_back(std::move(r));
  std::vector<MeasuredTrace> out;
  for (const auto& [rank, rows] : ranks) out.push_back(from_trace_rows(rows, rank, path));
  if (out.empty()) throw InputError(path, "", "no rows: the trace is empty");
  return out;
}

}  // namespace exasim::trace
