#!/usr/bin/env bash
# Installs what the `exasim` binary needs, builds only it, and simulates the default scenario (a 5B GPT on
# 64 A100s, AxoNN 4D). scripts/test.sh installs and builds the rest (tests, benchmarks, the SimGrid and
# MPI runtimes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh --main
build/exasim simulate configs/scenarios/default.json "$@"
