#!/bin/bash
# Counts what one scale_bench case costs in instructions, branch mispredictions and L1 data misses,
# under valgrind's cachegrind (deterministic, unlike wall times on a shared machine; about 50x slower
# than a plain run, so keep cases to a layer or two). The solver's cost is instructions and
# mispredicted branches on a working set that fits in L2 (docs/performance.md, "Current figures");
# cachegrind ignores prefetches, so its L1 misses are an upper bound. Prints the counts of the forked
# run that simulates (scale_bench forks one child per run).
#
# usage: scripts/count-instructions.sh [SCALE_BENCH=build/bench/scale_bench] [scale_bench options...]
# e.g.:  scripts/count-instructions.sh --gpus 4096 --model gpt-80b --grid 8,2,8 --batch 1024 \
#            --placement spread --routing minimal --layers 1
# With a -g build (cmake -DCMAKE_CXX_FLAGS=-g), `cg_annotate --auto=yes FILE` on the file it names
# gives the counts per source line.
set -euo pipefail
bench=build/bench/scale_bench
if [ $# -gt 0 ] && [ -x "$1" ]; then bench=$1; shift; fi
[ -x "$bench" ] || { echo "count-instructions.sh: $bench is not built (scripts/build.sh)" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "count-instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
out=$(mktemp -d)
valgrind --tool=cachegrind --branch-sim=yes --cache-sim=yes --cachegrind-out-file="$out/cg.%p" \
  "$bench" --repeats 1 "$@" > "$out/bench.txt" 2> "$out/valgrind.txt"
# The child that simulated is the process with the most instructions.
file=$(for f in "$out"/cg.*; do
  echo "$(grep '^summary:' "$f" | awk '{print $2}') $f"
done | sort -n | tail -1 | cut -d' ' -f2)
pid=${file##*.}
grep -E "^==$pid== (I   refs|D1  misses|Mispredicts)" "$out/valgrind.txt" | sed "s/^==$pid== *//"
grep '"median":true' "$out/bench.txt" | grep -o '"route_entries":[0-9]*\|"simulated_iteration_s":[0-9.e+-]*' | tr '\n' ' '
echo
echo "cachegrind file: $file"
