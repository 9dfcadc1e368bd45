#pragma once
// The entry points of exasim's libFuzzer targets (docs/reliability.md): each feeds one input's bytes to
// one loader, as a hostile user could: a scenario, machine or model file, a list of `--set` overrides,
// a calibration CSV, a trace CSV, a node list (`exasim place --nodes`). An input must end normally or in
// an InputError (exit 2 for the command); any other exception, a crash or a sanitizer report is a
// finding. The fuzzers (fuzzer_main.cpp, built by scripts/fuzz.sh) and the regression test that replays
// the saved corpus and crashers in the normal ctest (fuzz_regression_test.cpp) call the same functions.
//
// LIMITATIONS: the targets stop at loading and the checks that follow it (topology sizes, memory); they
// do not simulate, which takes far longer than a fuzzer's per-input budget.

#include <string>
#include <string_view>
#include <vector>

namespace exasim::fuzz {

/// The targets' names: scenario, machine, model, set, calibration_csv, trace_csv, node_list.
[[nodiscard]] const std::vector<std::string>& target_names();

/// Feeds `data` to the target `name`; returns normally for an accepted input or an InputError, and lets
/// anything else escape. std::invalid_argument on an unknown target name.
void run_target(std::string_view name, std::string_view data);

}  // namespace exasim::fuzz
