#!/usr/bin/env bash
# Builds exasim's libFuzzer targets (fuzz/; clang with ASan + UBSan, in build-fuzz/, apart from the normal
# build and CI) and runs each for SECONDS, one after another: scripts/fuzz.sh [SECONDS] [TARGET...]
# (default 60 s each, every target: scenario machine model set calibration_csv trace_csv node_list).
# Each run starts from the seed corpus fuzz/corpus/TARGET/ and grows build-fuzz/corpus/TARGET/; a crash,
# sanitizer report, leak, timeout (10 s) or out-of-memory (2 GiB) input is saved under
# build-fuzz/findings/TARGET/ and the script exits 1 at the end. Fix it, then copy the input into
# fuzz/crashers/TARGET/: the normal ctest replays it (fuzz:..., label unit). docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario machine model set calibration_csv trace_csv node_list)

sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_CXX_FLAGS=-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $sanitize" \
  "-DCMAKE_EXE_LINKER_FLAGS=$sanitize" -DEXASIM_BUILD_FUZZERS=ON -DEXASIM_BUILD_TESTS=OFF \
  -DEXASIM_BUILD_BENCHES=OFF -DEXASIM_WITH_SIMGRID=OFF -DEXASIM_WITH_MPI=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

export EXASIM_DATA_DIR="$PWD"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/findings/$t"
  log="build-fuzz/fuzz-$t.log"
  dict=()
  case $t in scenario | machine | model | set) dict=(-dict=fuzz/json.dict) ;; esac
  if build-fuzz/fuzzers/"fuzz_$t" "build-fuzz/corpus/$t" "fuzz/corpus/$t" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t/" "${dict[@]}" >"$log" 2>&1; then
    result="no finding"
  else
    result="FINDING in build-fuzz/findings/$t/ (log $log)"
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "fuzz.sh: $t: ${seconds} s, ${runs:-?} executions, $result"
done
exit $status
