// The `exasim` Python module (docs/python.md): simulate a scenario and get its Summary as Python values,
// job (the whole training run, docs/job.md), and tune, sweep, place, topo and presets as the command's --json object.
// simulate() calls the library (api::simulate) and converts report::to_json's tree node by node, so no JSON text passes
// through Python; the other functions run the command in this process (cli::run with --json) and convert the object it
// printed. Scenario dicts go through the file loader's own parser (parse_scenario, source "<dict>"),
// and a dict handed to a command is written to a temporary file whose name errors report as "<dict>".
// Bad input raises exasim.InputError (a ValueError) with the message the command prints after
// "exasim: error: "; anything else raises RuntimeError. The GIL is released while exasim runs.
//
// LIMITATIONS: one simulation per call, no progress shown and the command's log (stderr) dropped on
// success; tune, sweep and place fork child processes for jobs > 1 and for layer sampling, which is safe
// only while no other thread of the interpreter holds a lock the child needs (call them from the main
// thread; simulate() never forks: its two layer samples run one after the other); a sweep value is
// passed as text in the command's comma-separated list, so it cannot itself hold a comma; simulate()
// neither writes traces nor meters links (the command's --out and --links).

#include "sim/api/job.hpp"
#include "sim/api/simulate.hpp"
#include "sim/cli/cli.hpp"
#include "sim/core/error.hpp"
#include "sim/report/summary_views.hpp"
#include "sim/scenario/scenario.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// Bad input reported by a command run in-process: its message exactly as printed, no prefix added.
class CommandInputError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename Json>
py::object to_python(const Json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(j.template get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(j.template get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return py::float_(j.template get<double>());
    case nlohmann::json::value_t::string: return py::str(j.template get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& item : j) list.append(to_python(item));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;  // insertion-ordered: keys keep the documented order
      for (auto it = j.begin(); it != j.end(); ++it) dict[py::str(it.key())] = to_python(it.value());
      return dict;
    }
    default: throw std::runtime_error("exasim: a JSON value of an unexpected type (binary or discarded)");
  }
}

nlohmann::json from_python(py::handle value, const std::string& where) {
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();  // before int: bool is an int in Python
  if (py::isinstance<py::int_>(value)) return value.cast<std::int64_t>();
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json object = nlohmann::json::object();
    for (auto [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key)) throw py::type_error(where + ": dict keys must be str");
      const auto name = key.cast<std::string>();
      object[name] = from_python(item, where + "." + name);
    }
    return object;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json array = nlohmann::json::array();
    for (auto item : value) array.push_back(from_python(item, where));
    return array;
  }
  throw py::type_error(where + ": " + std::string(py::str(py::type::of(value).attr("__name__"))) +
                       " is not a JSON value (None, bool, int, float, str, dict, list)");
}

/// A --set value as the command reads it: text as given (parsed as JSON, else a string), anything else
/// as its JSON text.
std::string value_text(py::handle value, const std::string& where) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  return from_python(value, where).dump();
}

/// `sets` as "path=value" strings: a dict {path: value}, a list of "path=value", or None.
std::vector<std::string> overrides_of(const py::object& sets) {
  std::vector<std::string> out;
  if (sets.is_none()) return out;
  if (py::isinstance<py::dict>(sets)) {
    for (auto [key, value] : sets.cast<py::dict>()) {
      const auto path = py::str(key).cast<std::string>();
      out.push_back(path + "=" + value_text(value, "sets." + path));
    }
    return out;
  }
  if (py::isinstance<py::str>(sets)) throw py::type_error("sets: a dict {path: value} or a list of 'path=value'");
  for (auto item : sets) out.push_back(py::str(item).cast<std::string>());
  return out;
}

bool is_path(const py::object& scenario) {
  return py::isinstance<py::str>(scenario) || py::hasattr(scenario, "__fspath__");
}

std::string path_of(const py::object& scenario) {
  return py::str(py::module_::import("os").attr("fspath")(scenario)).cast<std::string>();
}

/// A scenario dict as a file for a command; removed when the call ends.
class TempScenario {
 public:
  explicit TempScenario(const nlohmann::json& doc) {
    std::string name = (std::filesystem::temp_directory_path() / "exasim-py-XXXXXX.json").string();
    const int fd = ::mkstemps(name.data(), 5);
    if (fd < 0) throw std::runtime_error("exasim: cannot create a temporary scenario file in " + name);
    ::close(fd);
    path_ = name;
    std::ofstream(path_) << doc.dump();
  }
  ~TempScenario() { std::remove(path_.c_str()); }
  TempScenario(const TempScenario&) = delete;
  TempScenario& operator=(const TempScenario&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); !from.empty() && at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

/// Runs `exasim ARGS` in this process and returns the JSON object it printed. `scenario`, when given, is
/// the command's first operand: a path, or a dict written to a temporary file.
py::object run_command(std::vector<std::string> args, const std::optional<py::object>& scenario) {
  std::optional<TempScenario> temp;
  std::string shown_as;  // the temporary file's name, reported as "<dict>"
  if (scenario) {
    if (is_path(*scenario)) {
      args.insert(args.begin() + 1, path_of(*scenario));
    } else {
      temp.emplace(from_python(*scenario, "scenario"));
      shown_as = temp->path();
      args.insert(args.begin() + 1, temp->path());
    }
  }
  args.insert(args.begin(), "exasim");
  std::ostringstream out, err;
  int rc = 0;
  {
    py::gil_scoped_release release;
    rc = exasim::cli::run(args, out, err);
  }
  std::string log = err.str();
  replace_all(log, shown_as, "<dict>");
  // tune exits 4 when nothing fits, its JSON (the refusals) printed all the same.
  if (rc == 0 || (rc == 4 && !out.str().empty())) return to_python(nlohmann::ordered_json::parse(out.str()));
  const std::string prefix = "exasim: error: ";
  if (auto at = log.rfind(prefix); rc == 2 && at != std::string::npos) {
    auto message = log.substr(at + prefix.size());
    message = message.substr(0, message.find('\n'));  // drops CLI11's "Run 'exasim --help'" line
    throw CommandInputError(message);
  }
  throw std::runtime_error("exasim " + args[1] + " exited " + std::to_string(rc) + ": " + log);
}

/// A scenario given as a path or a dict, with its overrides: read while the GIL is held (it touches
/// Python objects), loaded by load() once the GIL is released.
struct ScenarioInput {
  std::optional<std::string> path;
  nlohmann::json doc;
  std::vector<std::string> overrides;

  ScenarioInput(const py::object& scenario, const py::object& sets, const std::optional<std::int64_t>& sample_layers)
      : overrides(overrides_of(sets)) {
    if (sample_layers) overrides.push_back("simulation.sample_layers=" + std::to_string(*sample_layers));
    if (is_path(scenario))
      path = path_of(scenario);
    else
      doc = from_python(scenario, "scenario");
  }
  exasim::scenario::Scenario load() {
    return path ? exasim::scenario::load_scenario(*path, overrides)
                : exasim::scenario::parse_scenario(std::move(doc), "<dict>", overrides);
  }
};

py::dict simulate(const py::object& scenario, const py::object& sets, const std::string& backend,
                  const std::optional<std::int64_t>& sample_layers) {
  ScenarioInput input(scenario, sets, sample_layers);
  nlohmann::ordered_json summary;
  {
    py::gil_scoped_release release;
    auto s = input.load();
    // As `exasim simulate`, quiet and without --out; concurrent_samples stays off so that no child is
    // forked from the interpreter.
    exasim::api::SimulateOptions options;
    options.backend = exasim::api::parse_backend(backend);
    summary = exasim::report::to_json(exasim::api::simulate(s, options));
  }
  return to_python(summary);
}

/// `exasim job --json`'s object, through the library as simulate() (no child process forked).
py::object job(const py::object& scenario, const py::object& sets, const std::optional<std::int64_t>& sample_layers) {
  ScenarioInput input(scenario, sets, sample_layers);
  nlohmann::json report;
  {
    py::gil_scoped_release release;
    auto s = input.load();
    report = exasim::api::to_json(exasim::api::run_job(s));
  }
  return to_python(report);
}

std::vector<std::string> with_sets(std::vector<std::string> args, const py::object& sets) {
  for (auto& o : overrides_of(sets)) {
    args.push_back("--set");
    args.push_back(std::move(o));
  }
  return args;
}

}  // namespace

PYBIND11_MODULE(exasim, m) {
  m.doc() = "exasim: predicts and explains LLM training iterations on GPU supercomputers (docs/python.md)";
  m.attr("__version__") = EXASIM_VERSION;
  // Leaked on purpose: a static py::object would be destroyed after the interpreter is gone.
  static auto* input_error = new py::exception<exasim::InputError>(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const exasim::InputError& e) {
      PyErr_SetString(input_error->ptr(), e.what());
    } catch (const CommandInputError& e) {
      PyErr_SetString(input_error->ptr(), e.what());
    }
  });

  m.def("simulate", &simulate, py::arg("scenario"), py::arg("sets") = py::none(), py::arg("backend") = "fast",
        py::arg("sample_layers") = py::none(),
        "Simulates one iteration; returns the summary (the keys of `exasim simulate --json`).");
  m.def("job", &job, py::arg("scenario"), py::arg("sets") = py::none(), py::arg("sample_layers") = py::none(),
        "Prices the whole training run of a scenario with a job object; returns `exasim job --json`'s object.");
  m.def(
      "tune",
      [](const py::object& scenario, const py::object& sets, const std::string& scheme, std::int64_t top,
         std::int64_t jobs) {
        return run_command(with_sets({"tune", "--json", "--scheme", scheme, "--top", std::to_string(top), "--jobs",
                                      std::to_string(jobs)},
                                     sets),
                           scenario);
      },
      py::arg("scenario"), py::arg("sets") = py::none(), py::arg("scheme") = "axonn4d", py::arg("top") = 16,
      py::arg("jobs") = 1, "Searches the parallel configuration; returns `exasim tune --json`'s object.");
  m.def(
      "sweep",
      [](const py::object& scenario, const py::dict& vary, bool zip, bool tune, std::int64_t jobs,
         const py::object& sets) {
        std::vector<std::string> args = {"sweep", "--json", "--jobs", std::to_string(jobs)};
        for (auto [key, values] : vary) {
          const auto name = py::str(key).cast<std::string>();
          std::string list;
          for (auto value : values) {
            if (!list.empty()) list += ',';
            list += value_text(value, "vary." + name);
          }
          args.insert(args.end(), {"--vary", name + "=" + list});
        }
        if (zip) args.push_back("--zip");
        if (tune) args.push_back("--tune");
        return run_command(with_sets(args, sets), scenario);
      },
      py::arg("scenario"), py::arg("vary"), py::arg("zip") = false, py::arg("tune") = false, py::arg("jobs") = 1,
      py::arg("sets") = py::none(), "Simulates the scenario over lists of field values; `exasim sweep --json`.");
  m.def(
      "place",
      [](const py::object& scenario, const py::object& sets, double budget_s, std::int64_t top, std::int64_t jobs) {
        return run_command(with_sets({"place", "--json", "--budget-s", nlohmann::json(budget_s).dump(), "--top",
                                      std::to_string(top), "--jobs", std::to_string(jobs)},
                                     sets),
                           scenario);
      },
      py::arg("scenario"), py::arg("sets") = py::none(), py::arg("budget_s") = 60.0, py::arg("top") = 4,
      py::arg("jobs") = 1, "Searches where the ranks go; returns `exasim place --json`'s object.");
  m.def(
      "topology",
      [](const std::string& name) {
        return run_command({"topo", name, "--json"}, std::nullopt);
      },
      py::arg("name"), "A machine's network (preset name or JSON file); `exasim topo --json`.");
  m.def(
      "presets",
      [] {
        return run_command({"presets", "--json"}, std::nullopt);
      },
      "The shipped machines, models and GPUs; `exasim presets --json`.");
}
