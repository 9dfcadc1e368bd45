#!/bin/bash
# The placement and routing cases (Frontier preset, 4,096 GCDs unless said, full models:
# gpt-40b 38 layers, gpt-80b 42), one scale_bench run each, as a table: wall time, events/s and the
# simulated iteration. Extra arguments go to every scale_bench call, e.g. `--solver components` for
# the exact reference answers (slow: minutes per spread case) or `--repeats 3` for medians. `entries`:
# the route entries the solver brought into its re-solves (scale_bench's route_entries), and ns/entry
# the wall time over them: spread placements cost in proportion to these (docs/performance.md).
#
# usage: bench/scale/placements.sh [SCALE_BENCH=build/bench/scale_bench] [scale_bench options...]
set -euo pipefail
bench=build/bench/scale_bench
if [ $# -gt 0 ] && [ -x "$1" ]; then bench=$1; shift; fi
[ -x "$bench" ] || { echo "placements.sh: $bench is not built (scripts/build.sh)" >&2; exit 2; }
{
  "$bench" --gpus 4096 --model gpt-40b --grid 2,4,8 --batch 2048 --placement packed,spread,random "$@"
  "$bench" --gpus 4096 --model gpt-80b --grid 8,2,8 --batch 1024 --placement packed,spread,random "$@"
  "$bench" --gpus 4096 --model gpt-80b --grid 8,2,8 --batch 1024 --layers 8 --placement spread \
    --routing minimal,valiant,adaptive "$@"
  "$bench" --gpus 1024 --model gpt-40b --grid 1,4,4 --batch 2048 --placement packed "$@"
  "$bench" --gpus 2048 --model gpt-40b --grid 4,4,8 --batch 2048 --placement packed,spread,random "$@"
} | grep '"median":true' | awk '
  function field(name,   m) { return match($0, "\"" name "\":[^,}]*") ? substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) : "" }
  BEGIN { printf "%6s %-8s %-12s %6s %-9s %-8s %8s %10s %9s %8s %19s\n", "gpus", "model", "grid", "layers", "placement", "routing", "wall_s", "events/s", "entries", "ns/entry", "iteration_s" }
  { grid = match($0, /"grid":\[[0-9,]*\]/) ? substr($0, RSTART + 8, RLENGTH - 9) : ""; gsub(/,/, "x", grid)
    model = field("model"); gsub(/"/, "", model); pl = field("placement"); gsub(/"/, "", pl); ro = field("routing"); gsub(/"/, "", ro)
    entries = field("route_entries")
    printf "%6d %-8s %-12s %6d %-9s %-8s %8.2f %9.2fM %8.1fM %8s %19.15g\n", field("gpus"), model, grid, field("layers"), pl, ro,
           field("wall_s"), field("events_per_s") / 1e6, entries / 1e6,
           (entries > 0 ? sprintf("%.0f", field("wall_s") * 1e9 / entries) : "-"), field("simulated_iteration_s") }'
