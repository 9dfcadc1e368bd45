#!/usr/bin/env bash
# Installs what is missing, builds, and simulates the default scenario (a 5B GPT on 64 A100s, AxoNN 4D).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
build/exasim simulate configs/scenarios/default.json "$@"
