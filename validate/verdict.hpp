#pragma once
// What `exasim validate --max-error-pct` answers: whether the model's iteration time is within the
// tolerance of the emulation's, judged over the error's 95% interval (noise.hpp), or whether the
// measurement cannot say. Exit codes are documented in docs/reliability.md.
//
// LIMITATIONS: the hypervisor's share is the host's whole CPU during each emulation, read from Linux's
// counters; where they are missing (-1) an emulation counts as undisturbed and only the interval judges.

#include "validate/validation.hpp"

#include <iosfwd>

namespace exasim::validate {

inline constexpr int kExitOutside = 4;   ///< the whole interval lies beyond the tolerance
inline constexpr int kExitTooNoisy = 5;  ///< the measurement cannot judge the model

/// 0 when the interval lies within +-max_error_pct; kExitOutside when it lies wholly beyond;
/// kExitTooNoisy when it straddles the bound (the message says how many repeats would settle it), and
/// whatever the interval when emulations it kept lost more CPU time to the hypervisor than
/// r.disturbed_bound_pct() (ValidationResult::disturbed_kept) or the calibration it simulated on was
/// measured on a disturbed host (ValidationResult::calibration_disturbed). Writes the reason to `err`
/// unless it returns 0.
[[nodiscard]] int verdict_exit_code(const ValidationResult& r, double max_error_pct, std::ostream& err);

}  // namespace exasim::validate
