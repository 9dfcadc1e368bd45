#!/usr/bin/env bash
# Configures and builds exasim in ./build (Release): scripts/build.sh [--main] [CONFIGURE ARGS...]
#   --main  only the `exasim` binary, with the packages it needs (scripts/run-default.sh: the first answer);
#           built without the SimGrid and MPI runtimes unless they are already installed.
#   default every target (tests, benchmarks, both runtimes), after installing every dependency
#           (scripts/test.sh, the CI path, adds -DEXASIM_WERROR=ON).
# Extra arguments go to the configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=()
# Both runtimes are ON explicitly in a full build: a first `--main` build may have cached them OFF
# before they were installed.
configure=(-DEXASIM_WITH_SIMGRID=ON -DEXASIM_WITH_MPI=ON)
targets=()
if [ "${1:-}" = "--main" ]; then
  shift
  deps=(--minimal)
  configure=()
  targets=(--target exasim)
fi
scripts/install-deps.sh "${deps[@]}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${configure[@]}" "$@" >/dev/null
cmake --build build -j "$(nproc)" "${targets[@]}"
