#include "validate/verdict.hpp"

#include <cstdio>
#include <ostream>
#include <string>

namespace exasim::validate {

int verdict_exit_code(const ValidationResult& r, double max_error_pct, std::ostream& err) {
  const auto& e = r.interval;
  char range[96];
  std::snprintf(range, sizeof range, "%+.1f%% (95%% interval %+.1f%% to %+.1f%% over %u emulations)", e.mean_pct,
                e.low_pct, e.high_pct, e.samples);
  if (!r.calibration_disturbed.empty()) {
    // The simulated side then prices every collective at the hypervisor's hour, not the host's.
    err << "exasim: error: too noisy to judge: the calibration was measured on a disturbed host ("
        << r.calibration_disturbed << "); iteration time error " << range
        << " is not a verdict on the model: validate again on a quieter hour (README: Validate on this host)\n";
    return kExitTooNoisy;
  }
  if (const std::size_t disturbed = r.disturbed_kept(); disturbed > 0) {
    // A disturbed emulation runs slow by what the hypervisor took, which no model of this host can
    // predict: judging it would blame or credit the model for the hour.
    char what[200];
    std::snprintf(what, sizeof what,
                  "%zu of the %zu emulations kept lost more than %.0f%% of the CPU time to the hypervisor (up to "
                  "%.1f%%; %zu more were run and dropped)",
                  disturbed, r.steal_pct.size(), r.disturbed_bound_pct(), r.most_stolen_pct(),
                  r.dropped_steal_pct.size());
    err << "exasim: error: too noisy to judge: " << what << "; iteration time error " << range
        << " is not a verdict on the model: validate again on a quieter hour (README: Validate on this host)\n";
    return kExitTooNoisy;
  }
  switch (judge(e, max_error_pct)) {
    case Verdict::within: return 0;
    case Verdict::outside:
      err << "exasim: error: iteration time error " << range << " exceeds --max-error-pct " << max_error_pct << "\n";
      return kExitOutside;
    case Verdict::undecided: break;
  }
  const auto n = repeats_to_decide(e, max_error_pct);
  err << "exasim: error: too noisy to judge: iteration time error " << range << " straddles +-" << max_error_pct
      << "%; "
      << (n > 0 ? "about " + std::to_string(n) + " emulations would settle it (--repeats " + std::to_string(n) + ")"
                : std::string("its mean sits on the bound: no number of repeats settles it"))
      << ", or a quieter host (README: Validate on this host)\n";
  return kExitTooNoisy;
}

}  // namespace exasim::validate
