#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every test (ctest; labels: unit,
# integration, slow, mpi). Then builds the asan preset (AddressSanitizer + UndefinedBehaviorSanitizer,
# build-asan/, benchmarks skipped) and runs the unit and integration labels under it: about 10 more
# minutes on 2 cores. EXASIM_SKIP_ASAN=1 skips that second pass (CI never does).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DEXASIM_WERROR=ON
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [ "${EXASIM_SKIP_ASAN:-0}" = 1 ]; then
  echo "test.sh: EXASIM_SKIP_ASAN=1, sanitizer pass skipped" >&2
  exit 0
fi
cmake --preset asan -DEXASIM_WERROR=ON >/dev/null
cmake --build --preset asan -j "$(nproc)"
# Not again under the sanitizers: the format check (no code runs) and the README/tour examples (full-scale
# runs of the code the integration tests already cover at small scale; a quarter of the pass's test time).
ctest --preset asan -L 'unit|integration' -E '^(format|examples):' -j "$(nproc)"
