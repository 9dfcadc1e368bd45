#!/usr/bin/env bash
# Configures and builds exasim in ./build (Release): scripts/build.sh [--main] [CONFIGURE ARGS...]
#   --main  only the `exasim` binary, with the packages it needs (scripts/run-default.sh: the first answer);
#           built without the SimGrid and MPI runtimes unless they are already installed.
#   default every target (tests, benchmarks, both runtimes), after installing every dependency
#           (scripts/test.sh, the CI path, adds -DEXASIM_WERROR=ON).
# Extra arguments go to the configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--main" ]; then
  shift
  scripts/install-deps.sh --minimal
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build build -j "$(nproc)" --target exasim
else
  scripts/install-deps.sh
  # Both runtimes are ON explicitly: a first `--main` build may have cached them OFF before they were
  # installed.
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DEXASIM_WITH_SIMGRID=ON -DEXASIM_WITH_MPI=ON "$@" >/dev/null
  cmake --build build -j "$(nproc)"
fi
