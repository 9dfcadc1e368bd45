#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every test (ctest; labels: unit,
# integration, slow, mpi).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DEXASIM_WERROR=ON
ctest --test-dir build --output-on-failure -j "$(nproc)"
