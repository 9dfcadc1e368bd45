#!/usr/bin/env bash
# Configures and builds exasim in ./build (Release). Used by both README commands; extra arguments go to
# the configure step (scripts/test.sh, the CI path, adds -DEXASIM_WERROR=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/install-deps.sh"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"
