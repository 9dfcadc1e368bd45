#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (ctest; labels: unit, integration, slow).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
