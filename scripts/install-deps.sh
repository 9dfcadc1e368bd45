#!/usr/bin/env bash
# Installs exasim's build and test dependencies from Debian 12 packages: scripts/install-deps.sh [--minimal]
# --minimal installs only what the `exasim` binary needs (scripts/run-default.sh): the two optional
# runtimes (SimGrid, OpenMPI) and the test tools are left for scripts/test.sh.
# Idempotent: packages already present are skipped, and apt is not touched when nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake
  nlohmann-json3-dev   # scenario and preset files
  libcli11-dev         # command line
  catch2               # tests (v2, single header; CMake looks for it when configuring)
  libfccp-dev          # trace CSV reader
  zlib1g-dev           # gzipped profiler traces (traces/measured.cpp)
  libboost-graph-dev   # topologies/
)
if [ "${1:-}" != "--minimal" ]; then
  packages+=(
    libsimgrid-dev       # reference runtime (sim/simgrid)
    openmpi-bin libopenmpi-dev  # emulation runtime (emu/)
    clang-format         # style check (ctest format:clang-format, .clang-format)
    chromium             # exasim report pages loaded headless (ctest -L browser; skipped without it)
    pybind11-dev python3-dev  # the Python module (python/, docs/python.md)
    python3-matplotlib   # its what-if example's plot (examples/python/what_if.py)
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present" >&2
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
